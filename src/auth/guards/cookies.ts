import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { CookieOptions, Response } from 'express';

export const ACCESS_COOKIE = 'access_token';
export const REFRESH_COOKIE = 'refresh_token';

/** Sets and clears cookies on the response without handing the handler the raw response. */
export interface CookieWriter {
  set(name: string, value: string, options: CookieOptions): void;
  clear(name: string, options: CookieOptions): void;
}

export const Cookies = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): CookieWriter => {
    const response = ctx.switchToHttp().getResponse<Response>();
    return {
      set: (name, value, options) => void response.cookie(name, value, options),
      clear: (name, options) => void response.clearCookie(name, options),
    };
  },
);
