import { Inject, Injectable } from '@nestjs/common';
import type { CookieOptions } from 'express';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { CookieWriter } from './guards/cookies';
import { randomToken } from '../common/secrets';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';

export const DEVICE_COOKIE = 'staff_device';
const DEVICE_TTL_S = 180 * 86_400;

/**
 * OWASP's device cookies: each successful staff sign-in leaves a signed cookie naming the username
 * and a random device id. Failed attempts from such a device count against the device, apart from
 * the failures per username, so a stranger's guesses elsewhere cannot lock the owner out.
 */
@Injectable()
export class StaffDevices {
  private readonly key: Buffer;

  constructor(@Inject(SETTINGS) private readonly settings: Settings) {
    // Its own key, derived from the access-token secret with a label: a device cookie is no token.
    this.key = createHmac('sha256', settings.jwtAccessSecret).update('staff-device').digest();
  }

  /** The device id of the request's device cookie when it is valid for `username`, else null. */
  deviceOf(cookies: Record<string, unknown> | undefined, username: string): string | null {
    const value = cookies?.[DEVICE_COOKIE];
    if (typeof value !== 'string' || value.length > 200) return null;
    const [name, device, signature] = value.split('.');
    if (!name || !device || !signature) return null;
    if (Buffer.from(name, 'base64url').toString() !== username) return null;
    const expected = this.sign(name, device);
    const given = Buffer.from(signature, 'base64url');
    return given.length === expected.length && timingSafeEqual(given, expected) ? device : null;
  }

  /** After a successful sign-in: keeps a valid cookie of this username, or issues a new one. */
  remember(cookies: CookieWriter, current: Record<string, unknown> | undefined, username: string) {
    if (this.deviceOf(current, username)) return;
    const name = Buffer.from(username).toString('base64url');
    const device = randomToken(16);
    const value = `${name}.${device}.${this.sign(name, device).toString('base64url')}`;
    cookies.set(DEVICE_COOKIE, value, this.options());
  }

  private sign(name: string, device: string): Buffer {
    return createHmac('sha256', this.key).update(`${name}.${device}`).digest();
  }

  private options(): CookieOptions {
    return {
      httpOnly: true,
      secure: this.settings.cookieSecure,
      sameSite: 'strict',
      path: '/api/v1/auth/admin',
      maxAge: DEVICE_TTL_S * 1000,
    };
  }
}
