import { Inject, Injectable } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { refuseSelfOrStaff } from '../admin/acting-on';
import { AuditService } from '../audit/audit.service';
import type { AuthUser } from '../auth/guards/auth-user';
import { AppError } from '../common/errors';
import { sha256 } from '../common/secrets';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { Metrics } from '../metrics/metrics.service';
import { AccountsRepository } from '../users/accounts.repository';
import { UsersService } from '../users/users.service';
import { DEVICE_AUDIT_ACTIONS } from './devices.constants';
import {
  type DeviceKey,
  type DeviceRecord,
  DevicesRepository,
  type NewDevice,
} from './devices.repository';
import { LinkTokens } from './link-tokens';

/** A user's devices and links, as the owner's page and staff see them. */
export interface DeviceList {
  subscriptionUrl: string;
  deviceLimit: number;
  devices: DeviceRecord[];
}

/** What making a device for a fetch of the account link gave. */
export type FetchDevice = { device: DeviceRecord; rank: number } | { limitReached: true };

/**
 * Devices of an account: one per HWID or app that fetched the account's link, or made with a link
 * of its own; at most the plan's `device_limit`. The limit holds under concurrency because every
 * device is made with the user's row locked (the same lock staff actions take), which also makes
 * twenty fetches at once with one HWID one device.
 */
@Injectable()
export class DevicesService {
  constructor(
    private readonly devices: DevicesRepository,
    private readonly accounts: AccountsRepository,
    private readonly users: UsersService,
    private readonly audit: AuditService,
    private readonly tokens: LinkTokens,
    private readonly metrics: Metrics,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /** `<SUB_URL>/sub/<token>`. */
  urlOf(token: string): string {
    return `${this.settings.subUrl}/sub/${token}`;
  }

  async list(userId: string): Promise<DeviceList> {
    const [subscriptionUrl, deviceLimit, devices] = await Promise.all([
      this.accountLink(userId),
      this.devices.deviceLimitOf(userId, this.settings.deviceLimitDefault),
      this.devices.devicesOf(userId),
    ]);
    return { subscriptionUrl, deviceLimit, devices };
  }

  /** The account's link, made on first use. */
  async accountLink(userId: string): Promise<string> {
    let version = await this.devices.accountLinkVersion(userId);
    if (version === null) {
      await this.devices.createAccountLink(userId, this.hashOf(this.tokens.account(userId, 0)));
      version = (await this.devices.accountLinkVersion(userId)) ?? 0;
    }
    return this.urlOf(this.tokens.account(userId, version));
  }

  /** A new link for the account: the old one stops answering; devices keep their ids. */
  @Transactional()
  async rotateLink(userId: string): Promise<string> {
    await this.accountLink(userId);
    const version = ((await this.devices.accountLinkVersion(userId, true)) ?? 0) + 1;
    const token = this.tokens.account(userId, version);
    await this.devices.replaceAccountLink(userId, version, this.hashOf(token));
    return this.urlOf(token);
  }

  /** A device with a link of its own; 409 DEVICE_LIMIT when the account has all it may. */
  @Transactional()
  async createLinked(
    userId: string,
    name: string,
  ): Promise<{ device: DeviceRecord; subscriptionUrl: string }> {
    await this.accounts.lockOne(userId);
    const limit = await this.devices.deviceLimitOf(userId, this.settings.deviceLimitDefault);
    if ((await this.devices.countOf(userId)) >= limit) {
      throw new AppError('DEVICE_LIMIT', `the account has ${limit} of ${limit} devices`);
    }
    const device = await this.make({ userId, name, source: 'link', client: null });
    const token = this.tokens.device(device.id);
    await this.devices.createDeviceLink(userId, device.id, this.hashOf(token));
    return { device, subscriptionUrl: this.urlOf(token) };
  }

  /**
   * The device of a fetch of the account link (its HWID, else its app), made when it is new and
   * the account has room; `rank` is its place among the account's devices, oldest first.
   */
  @Transactional()
  async deviceForFetch(
    userId: string,
    key: DeviceKey,
    name: string,
    client: string | null,
  ): Promise<FetchDevice> {
    const found = await this.devices.deviceByKey(userId, key);
    if (found) return { device: found, rank: await this.rankOf(found) };
    await this.accounts.lockOne(userId);
    // Another fetch with the same key may have made it while this one waited for the lock.
    const made = await this.devices.deviceByKey(userId, key);
    if (made) return { device: made, rank: await this.rankOf(made) };
    const limit = await this.devices.deviceLimitOf(userId, this.settings.deviceLimitDefault);
    const count = await this.devices.countOf(userId);
    if (count >= limit) return { limitReached: true };
    const source = 'app' in key ? 'app' : 'hwid';
    return { device: await this.make({ userId, name, source, client, key }), rank: count + 1 };
  }

  async rename(userId: string, deviceId: string, name: string): Promise<DeviceRecord> {
    const device = await this.devices.rename(userId, deviceId, name);
    if (!device) throw new AppError('NOT_FOUND', 'device not found');
    return device;
  }

  /** Removes the device: its id stops working on every node (the nodes are nudged). */
  async remove(userId: string, deviceId: string): Promise<void> {
    if (!(await this.devices.remove(userId, deviceId))) {
      throw new AppError('NOT_FOUND', 'device not found');
    }
  }

  /** A user's devices for staff; 404 NO_USER for an unknown user. */
  async staffList(userId: string): Promise<DeviceList> {
    await this.users.view(userId);
    return this.list(userId);
  }

  /** Staff remove a user's device, with a reason, audited (never their own, staff only by the owner). */
  @Transactional()
  async staffRemove(
    actor: AuthUser,
    userId: string,
    deviceId: string,
    reason: string,
  ): Promise<void> {
    const user = await this.users.withNoUser(() => this.accounts.lockOne(userId));
    refuseSelfOrStaff(actor, user);
    const removed = await this.devices.remove(userId, deviceId);
    if (!removed) throw new AppError('NOT_FOUND', 'device not found');
    await this.audit.record({
      actorId: actor.id,
      action: DEVICE_AUDIT_ACTIONS.removed,
      targetType: 'user',
      targetId: userId,
      before: { device_id: removed.id, name: removed.name, source: removed.source },
      after: { device_id: null, reason },
    });
  }

  private async make(device: NewDevice): Promise<DeviceRecord> {
    const made = await this.devices.insert(device);
    this.metrics.deviceCreated(device.source);
    return made;
  }

  private async rankOf(device: DeviceRecord): Promise<number> {
    const all = await this.devices.devicesOf(device.userId);
    return all.findIndex((d) => d.id === device.id) + 1;
  }

  private hashOf(token: string): Buffer {
    return sha256(token);
  }
}
