import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Controller, Get, Headers, Inject, Param, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AppError, validationFailed } from '../common/errors';
import { OutsideApiPrefix } from '../common/openapi/routes';
import { Public } from '../common/public.decorator';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { WEB_APP_CSP } from '../system/web-app';
import { LINK_FORMATS, type LinkFormat } from './dto/devices.dto';
import { SubscriptionService } from './subscription.service';

/** The path of links, outside the API's prefix (the web app leaves it alone). */
export const SUBSCRIPTION_PATH = 'sub/:token';

/**
 * `GET <SUB_URL>/sub/<token>`: what client apps import, or the subscription page for a browser.
 * Outside `/api` and the OpenAPI document: its answers are client formats, not the API's JSON
 * (docs/connecting.md and the contract describe them). The token is its own authentication.
 */
@ApiExcludeController()
@OutsideApiPrefix()
@Public()
@Controller()
export class SubscriptionController {
  private page: string | null = null;

  constructor(
    private readonly subscription: SubscriptionService,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  @Get(SUBSCRIPTION_PATH)
  async fetch(
    @Param('token') token: string,
    @Query('format') format: unknown,
    @Headers() headers: Record<string, string | undefined>,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<string | object> {
    const asked = parseFormat(format);
    if (asked === 'info') {
      response.setHeader('cache-control', 'no-store');
      return this.subscription.info(token);
    }
    if (asked === null && request.accepts(['text/plain', 'text/html']) === 'text/html') {
      // An unknown or replaced link still gets the page, at 404, which says so in words.
      const known = await this.subscription.resolve(token).then(
        () => true,
        (error: unknown) => {
          if (error instanceof AppError && error.code === 'NOT_FOUND') return false;
          throw error;
        },
      );
      if (known) this.subscription.pageShown();
      response.status(known ? 200 : 404);
      response.setHeader('content-type', 'text/html; charset=utf-8');
      response.setHeader('cache-control', 'no-store');
      response.setHeader('content-security-policy', WEB_APP_CSP);
      response.setHeader('x-robots-tag', 'noindex, nofollow');
      return this.webPage();
    }
    const answer = await this.subscription.fetch(token, asked, {
      userAgent: headers['user-agent'],
      hwid: headers['x-hwid'],
      deviceOs: headers['x-device-os'],
      osVersion: headers['x-ver-os'],
      deviceModel: headers['x-device-model'],
    });
    for (const [name, value] of Object.entries(answer.headers)) response.setHeader(name, value);
    response.setHeader('content-type', answer.contentType);
    return answer.body;
  }

  /** The web app's page, which shows the link's page at this path. */
  private webPage(): string {
    if (this.page) return this.page;
    const file = join(this.settings.webDir, 'index.html');
    if (!existsSync(file)) throw new AppError('NOT_FOUND', 'the web app is not built');
    this.page = readFileSync(file, 'utf8');
    return this.page;
  }
}

function parseFormat(value: unknown): LinkFormat | null {
  if (value === undefined) return null;
  if (typeof value === 'string' && (LINK_FORMATS as readonly string[]).includes(value)) {
    return value as LinkFormat;
  }
  throw validationFailed([
    { field: 'format', message: `must be one of ${LINK_FORMATS.join(', ')}` },
  ]);
}
