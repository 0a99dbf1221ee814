import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/errors';
import { sha256 } from '../common/secrets';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { Metrics } from '../metrics/metrics.service';
import { RoutingService } from '../nodes/routing.service';
import { toUserViewResponse, type UserResponse } from '../users/dto/user.response';
import { UsersService } from '../users/users.service';
import { type DeviceRecord, DevicesRepository } from './devices.repository';
import { DevicesService } from './devices.service';
import { appName, type ClientFormat, formatForAgent } from './formats/client-formats';
import {
  explanatoryEntry,
  render,
  type RenderedSubscription,
  type SubscriptionEntry,
} from './formats/render';
import { tokenHash } from './link-tokens';

/** What the app that fetched the link said of itself. */
export interface FetchingClient {
  userAgent?: string;
  /** `x-hwid`: kept only as its SHA-256, and only when it has the documented form. */
  hwid?: string;
  deviceOs?: string;
  osVersion?: string;
  deviceModel?: string;
}

/** Why a link has nothing to connect to, or `ok`. */
export type LinkOutcome =
  'ok' | 'blocked' | 'expired' | 'traffic_exceeded' | 'device_limit' | 'no_node';

/** A fetch's answer: the format's body, its headers, and what it came to. */
export interface SubscriptionAnswer extends RenderedSubscription {
  headers: Record<string, string>;
  outcome: LinkOutcome;
}

/** What the subscription page shows (`?format=info`). */
export interface LinkInfo {
  outcome: LinkOutcome;
  message: string | null;
  plan_name: string | null;
  expires_at: string | null;
  traffic_used_bytes: number;
  traffic_limit_bytes: number;
  device_limit: number;
  devices: { name: string; last_seen_at: string | null }[];
  subscription_url: string;
}

const HWID = /^[A-Za-z0-9=_-]{10,64}$/;
const CLIENT_MAX = 120;
const NAME_MAX = 40;

/**
 * The subscription link: what an app imports (one server per node of the user's share, with the
 * device's own VLESS id), in the format it reads, with the headers apps show (traffic, expiry,
 * the account page). A link with nothing to connect to still answers 200 in the app's format,
 * with one entry that names the reason, so the app shows it instead of "failed to update".
 */
@Injectable()
export class SubscriptionService {
  constructor(
    private readonly devices: DevicesRepository,
    private readonly deviceService: DevicesService,
    private readonly users: UsersService,
    private readonly routing: RoutingService,
    private readonly metrics: Metrics,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /** The link's account and device (`null` for the account's link); 404 for an unknown token. */
  async resolve(token: string): Promise<{ userId: string; deviceId: string | null; url: string }> {
    const hash = tokenHash(token);
    const link = hash ? await this.devices.linkByTokenHash(hash) : null;
    if (!link) throw new AppError('NOT_FOUND', 'no such subscription link');
    return { userId: link.userId, deviceId: link.deviceId, url: this.deviceService.urlOf(token) };
  }

  async fetch(
    token: string,
    format: ClientFormat | null,
    client: FetchingClient,
  ): Promise<SubscriptionAnswer> {
    const link = await this.resolve(token);
    const chosen = format ?? formatForAgent(client.userAgent);
    const user = toUserViewResponse(await this.users.view(link.userId));
    let outcome = this.accountOutcome(user);
    let device: DeviceRecord | null = null;
    if (outcome === 'ok') {
      const found = await this.deviceOf(link, client);
      if (found === null) outcome = 'device_limit';
      else device = found;
    }
    let entries: SubscriptionEntry[] = [];
    if (device) {
      const nodes = await this.routing.share(link.userId);
      if (nodes.length === 0) outcome = 'no_node';
      entries = nodes.map((node) => ({
        name: node.name,
        host: node.host,
        port: node.tunnelPort,
        vlessId: device.vlessId,
        reality: {
          publicKey: node.publicKey,
          shortId: node.shortId,
          sni: node.sniDomain,
          flow: node.tunnelFlow,
        },
      }));
    }
    const message = outcome === 'ok' ? null : await this.messageFor(outcome, link.userId);
    if (message !== null) entries = [explanatoryEntry(message)];
    const rendered = render(chosen, entries, this.title());
    this.metrics.subscriptionFetch(chosen, outcome);
    return { ...rendered, headers: this.headers(user, message), outcome };
  }

  /** The subscription page's figures; makes no device. */
  async info(token: string): Promise<LinkInfo> {
    const link = await this.resolve(token);
    const user = toUserViewResponse(await this.users.view(link.userId));
    const list = await this.deviceService.list(link.userId);
    let outcome = this.accountOutcome(user);
    if (outcome === 'ok' && (await this.routing.share(link.userId)).length === 0) {
      outcome = 'no_node';
    }
    this.metrics.subscriptionFetch('info', outcome);
    return {
      outcome,
      message: outcome === 'ok' ? null : await this.messageFor(outcome, link.userId),
      plan_name: user.subscription?.plan_name ?? null,
      expires_at: user.subscription?.expires_at ?? null,
      traffic_used_bytes: user.traffic.used_bytes,
      traffic_limit_bytes: user.traffic.limit_bytes,
      device_limit: list.deviceLimit,
      devices: list.devices.map((d) => ({
        name: d.name,
        last_seen_at: (d.lastSeenAt ?? d.lastFetchAt)?.toISOString() ?? null,
      })),
      subscription_url: link.url,
    };
  }

  /** Counts a fetch that got the page. */
  pageShown(): void {
    this.metrics.subscriptionFetch('page', 'ok');
  }

  private accountOutcome(user: UserResponse): LinkOutcome {
    if (user.blocked_at !== null) return 'blocked';
    const expires = user.subscription?.expires_at;
    if (!expires || Date.parse(expires) <= Date.now()) return 'expired';
    if (user.traffic.used_bytes >= user.traffic.limit_bytes) return 'traffic_exceeded';
    return 'ok';
  }

  /** The device this fetch is, made when new and there is room; null at the device limit. */
  private async deviceOf(
    link: { userId: string; deviceId: string | null },
    client: FetchingClient,
  ): Promise<DeviceRecord | null> {
    const described = describeClient(client);
    const limit = await this.devices.deviceLimitOf(link.userId, this.settings.deviceLimitDefault);
    let found: { device: DeviceRecord; rank: number } | { limitReached: true } | null;
    if (link.deviceId !== null) {
      found = await this.deviceService.linkedDevice(link.userId, link.deviceId);
      if (!found) throw new AppError('NOT_FOUND', 'no such subscription link');
    } else {
      const hwid = client.hwid && HWID.test(client.hwid) ? client.hwid : null;
      const app = appName(client.userAgent) ?? 'app';
      found = await this.deviceService.deviceForFetch(
        link.userId,
        hwid ? { hwidSha256: sha256(hwid) } : { app },
        deviceName(client, app),
        described,
      );
    }
    if ('limitReached' in found || found.rank > limit) return null;
    await this.devices.touchFetch(found.device.id, described);
    return found.device;
  }

  private async messageFor(outcome: LinkOutcome, userId: string): Promise<string> {
    const app = this.settings.appUrl;
    switch (outcome) {
      case 'ok':
        return '';
      case 'blocked':
        return `Account blocked: write to support at ${app}/support`;
      case 'expired':
        return `Subscription ended: renew at ${app}/plans`;
      case 'traffic_exceeded':
        return `Traffic used up: renew at ${app}/plans`;
      case 'device_limit': {
        const limit = await this.devices.deviceLimitOf(userId, this.settings.deviceLimitDefault);
        return `Device limit ${limit} of ${limit}: remove one at ${app}/account`;
      }
      case 'no_node':
        return 'No server is online now: update the subscription in a few minutes';
    }
  }

  private title(): string {
    return new URL(this.settings.appUrl).hostname;
  }

  /** The headers apps read: traffic and expiry exactly as `GET /users/me` has them, and more. */
  private headers(user: UserResponse, message: string | null): Record<string, string> {
    const title = this.title();
    const info = [
      'upload=0',
      `download=${user.traffic.used_bytes}`,
      `total=${user.traffic.limit_bytes}`,
    ];
    const expires = user.subscription?.expires_at;
    if (expires) info.push(`expire=${Math.floor(Date.parse(expires) / 1000)}`);
    const headers: Record<string, string> = {
      'subscription-userinfo': info.join('; '),
      'profile-update-interval': String(this.settings.subUpdateIntervalH),
      'profile-title': `base64:${Buffer.from(title).toString('base64')}`,
      'profile-web-page-url': `${this.settings.appUrl}/account`,
      'support-url': `${this.settings.appUrl}/support`,
      'content-disposition': `attachment; filename="${title.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
      'cache-control': 'no-store',
    };
    if (message) headers.announce = `base64:${Buffer.from(message).toString('base64')}`;
    return headers;
  }
}

/** What the app said of itself, in one line of at most 120 characters. */
function describeClient(client: FetchingClient): string | null {
  const parts = [client.userAgent, client.deviceOs, client.osVersion, client.deviceModel]
    .map((part) => (part ?? '').replace(/[\p{Cc}\p{Cf}]/gu, '').trim())
    .filter((part) => part !== '');
  return parts.length === 0 ? null : parts.join(' · ').slice(0, CLIENT_MAX);
}

/** A new device's name: the model when the app sent one, else the app's name. */
function deviceName(client: FetchingClient, app: string): string {
  const model = (client.deviceModel ?? '').replace(/[\p{Cc}\p{Cf}]/gu, '').trim();
  return (model || app).slice(0, NAME_MAX);
}
