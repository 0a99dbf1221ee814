import { Inject, Injectable } from '@nestjs/common';
import { isSubscriptionActive } from '../users/subscription-active';
import { AppError } from '../common/errors';
import { sha256 } from '../common/secrets';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { Metrics } from '../metrics/metrics.service';
import { RoutingService } from '../nodes/routing.service';
import { toUserViewResponse } from '../users/dto/user.response';
import { isOverLimit } from '../users/traffic-limit';
import { UsersService } from '../users/users.service';
import { type DeviceKey, DevicesRepository, type LinkFetchView } from './devices.repository';
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
/** A device's fetch is written at most this often (apps fetch on every start). */
const FETCH_RECORDED_MS = 10 * 60_000;
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
    const hash = tokenHash(token);
    const hwid = client.hwid && HWID.test(client.hwid) ? client.hwid : null;
    const app = appName(client.userAgent) ?? 'app';
    const key: DeviceKey = hwid ? { hwidSha256: sha256(hwid) } : { app };
    // One statement for the link, its account, its device and the routing counter.
    const view = hash
      ? await this.devices.linkFetchView(hash, key, {
          deviceLimit: this.settings.deviceLimitDefault,
          trafficLimit: this.settings.trafficLimitDefaultBytes,
        })
      : null;
    if (!view) throw new AppError('NOT_FOUND', 'no such subscription link');
    const chosen = format ?? formatForAgent(client.userAgent);
    let outcome = accountOutcome(view);
    let vlessId: string | null = null;
    if (outcome === 'ok') {
      vlessId = await this.deviceOf(view, key, client, app);
      if (vlessId === null) outcome = 'device_limit';
    }
    let entries: SubscriptionEntry[] = [];
    if (vlessId !== null) {
      const id = vlessId;
      const nodes = await this.routing.share(view.userId, view.routingVersion);
      if (nodes.length === 0) outcome = 'no_node';
      entries = nodes.map((node) => ({
        name: node.name,
        host: node.host,
        port: node.tunnelPort,
        vlessId: id,
        reality: {
          publicKey: node.publicKey,
          shortId: node.shortId,
          sni: node.sniDomain,
          flow: node.tunnelFlow,
        },
      }));
    }
    const message = outcome === 'ok' ? null : this.messageFor(outcome, view.deviceLimit);
    if (message !== null) entries = [explanatoryEntry(message)];
    const rendered = render(chosen, entries, this.title());
    this.metrics.subscriptionFetch(chosen, outcome);
    return { ...rendered, headers: this.headers(view, message), outcome };
  }

  /** The subscription page's figures; makes no device. */
  async info(token: string): Promise<LinkInfo> {
    const link = await this.resolve(token);
    const user = toUserViewResponse(await this.users.view(link.userId));
    const list = await this.deviceService.list(link.userId);
    let outcome = accountOutcome({
      blocked: user.blocked_at !== null,
      planName: user.subscription?.plan_name ?? null,
      expiresAt: user.subscription ? new Date(user.subscription.expires_at) : null,
      usedBytes: String(user.traffic.used_bytes),
      limitBytes: String(user.traffic.limit_bytes),
    });
    if (outcome === 'ok' && (await this.routing.share(link.userId)).length === 0) {
      outcome = 'no_node';
    }
    this.metrics.subscriptionFetch('info', outcome);
    return {
      outcome,
      message: outcome === 'ok' ? null : this.messageFor(outcome, list.deviceLimit),
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

  /**
   * The VLESS id of the device this fetch is: made when new and there is room; null at the device
   * limit (also for a device past the limit after the plan's limit went down). A fetch is written
   * down at most every FETCH_RECORDED_MS, or when the app describes itself otherwise.
   */
  private async deviceOf(
    view: LinkFetchView,
    key: DeviceKey,
    client: FetchingClient,
    app: string,
  ): Promise<string | null> {
    const described = describeClient(client);
    if (view.device) {
      if (view.device.rank > view.deviceLimit) return null;
      const last = view.device.lastFetchAt ? Date.parse(view.device.lastFetchAt) : 0;
      const other = described !== null && described !== view.device.client;
      if (other || Date.now() - last > FETCH_RECORDED_MS) {
        await this.devices.touchFetch(view.device.id, described);
      }
      return view.device.vlessId;
    }
    // A device's own link always has its device: the link is deleted with it.
    if (view.linkDeviceId !== null) throw new AppError('NOT_FOUND', 'no such subscription link');
    if (view.deviceCount >= view.deviceLimit) return null;
    const made = await this.deviceService.deviceForFetch(
      view.userId,
      key,
      deviceName(client, app),
      described,
    );
    if ('limitReached' in made || made.rank > view.deviceLimit) return null;
    await this.devices.touchFetch(made.device.id, described);
    return made.device.vlessId;
  }

  private messageFor(outcome: LinkOutcome, deviceLimit: number): string {
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
      case 'device_limit':
        return `Device limit ${deviceLimit} of ${deviceLimit}: remove one at ${app}/account`;
      case 'no_node':
        return 'No server is online now: update the subscription in a few minutes';
    }
  }

  private title(): string {
    return new URL(this.settings.appUrl).hostname;
  }

  /** The headers apps read: traffic and expiry exactly as `GET /users/me` has them, and more. */
  private headers(view: AccountFigures, message: string | null): Record<string, string> {
    const title = this.title();
    const info = ['upload=0', `download=${view.usedBytes}`, `total=${view.limitBytes}`];
    const ends = subscriptionEnd(view);
    if (ends) info.push(`expire=${Math.floor(ends.getTime() / 1000)}`);
    // When used traffic starts again from zero (as GET /users/me's traffic.resets_at), in the
    // header Remnawave's apps read for it.
    const refill =
      ends && ends.getTime() > Date.now() && view.trafficResetAt
        ? new Date(view.trafficResetAt)
        : null;
    const headers: Record<string, string> = {
      'subscription-userinfo': info.join('; '),
      'profile-update-interval': String(this.settings.subUpdateIntervalH),
      'profile-title': `base64:${Buffer.from(title).toString('base64')}`,
      'profile-web-page-url': `${this.settings.appUrl}/account`,
      'support-url': `${this.settings.appUrl}/support`,
      'content-disposition': `attachment; filename="${title.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
      'cache-control': 'no-store',
    };
    if (refill) headers['subscription-refill-date'] = String(Math.floor(refill.getTime() / 1000));
    if (message) headers.announce = `base64:${Buffer.from(message).toString('base64')}`;
    return headers;
  }
}

/** What a link's answer depends on of its account. */
type AccountFigures = Pick<
  LinkFetchView,
  'blocked' | 'planName' | 'expiresAt' | 'usedBytes' | 'limitBytes'
> &
  Partial<Pick<LinkFetchView, 'trafficResetAt'>>;

/** The subscription's end as `GET /users/me` shows it: only with a plan. */
function subscriptionEnd(view: AccountFigures): Date | null {
  return view.planName !== null && view.expiresAt !== null ? new Date(view.expiresAt) : null;
}

function accountOutcome(view: AccountFigures): LinkOutcome {
  if (view.blocked) return 'blocked';
  // Not blocked: the subscription-active rule then asks only whether its days run.
  if (!isSubscriptionActive({ subscriptionExpiresAt: subscriptionEnd(view), blockedAt: null })) {
    return 'expired';
  }
  if (isOverLimit(view.usedBytes, view.limitBytes)) return 'traffic_exceeded';
  return 'ok';
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
