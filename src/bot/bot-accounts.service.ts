import { Inject, Injectable } from '@nestjs/common';
import { type DeviceList, DevicesService } from '../devices/devices.service';
import { AuthService } from '../auth/auth.service';
import { AppError } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { PartnersService } from '../partners/partners.service';
import { UsersService } from '../users/users.service';
import { BotRepository } from './bot.repository';
import { parseStartPayload, type StartRequest } from './start-payload';

/** The Telegram user behind an update. */
export interface BotUser {
  tgId: number;
  username: string | null;
}

/** What a `/start` payload asks for, in the order the branches are tried. */
export type StartBranch =
  | { kind: 'partner'; code: string; result: 'attached' | 'kept' | 'other' | 'unknown' }
  | { kind: 'referral'; attached: boolean }
  | { kind: 'login'; code: string; createdAt: Date | null }
  | { kind: 'plain' };

/** Links into the web app, each with a fresh single-use bootstrap token. */
export interface AreaLinks {
  account: string;
  plans: string;
  syndicate: string;
}

export interface StartAnswer {
  branch: StartBranch;
  links: AreaLinks;
}

export type LoginDecision = 'confirm' | 'cancel';
export type LoginDecisionResult = 'confirmed' | 'cancelled' | 'gone';

const AREAS = ['account', 'plans', 'syndicate'] as const;

/** Telegram accounts in the bot: first contact, deep links, sign-in confirmation, reachability. */
@Injectable()
export class BotAccountsService {
  constructor(
    private readonly users: UsersService,
    private readonly auth: AuthService,
    private readonly partners: PartnersService,
    private readonly chats: BotRepository,
    private readonly devices: DevicesService,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /** The account writes to the bot: its language, and that it can be reached again. */
  noteChat(tgId: number, languageCode: string | null): Promise<void> {
    return this.chats.noteChat(tgId, languageCode);
  }

  /** Turns the account's warnings and reminders on or off. */
  setWarnings(tgId: number, on: boolean): Promise<void> {
    return this.chats.setWarningsOff(String(tgId), !on);
  }

  /** Whether the account gets warnings and reminders. */
  async warningsOn(tgId: number): Promise<boolean> {
    return !(await this.chats.warningsOff(String(tgId)));
  }

  /** Telegram answered 403 for this account, or it blocked the bot. */
  markUnreachable(tgId: number | string): Promise<void> {
    return this.chats.markUnreachable(String(tgId));
  }

  /** Any `/start`: the account exists afterwards, the payload's branch runs, fresh area links. */
  async start(from: BotUser, payload: string): Promise<StartAnswer> {
    const user = await this.users.telegramAccount(from.tgId, from.username);
    const branch = await this.runBranch(user.id, parseStartPayload(payload));
    return { branch, links: await this.areaLinks(user.id) };
  }

  /** Confirm or Cancel of a sign-in, by the account that opened the link, while it is pending. */
  async decideLogin(
    from: BotUser,
    code: string,
    decision: LoginDecision,
  ): Promise<LoginDecisionResult> {
    const user = await this.users.telegramAccount(from.tgId, from.username);
    if (decision === 'confirm') {
      return (await this.auth.confirmLoginCode(code, user.id)) ? 'confirmed' : 'gone';
    }
    return (await this.auth.cancelLoginCode(code, user.id)) ? 'cancelled' : 'gone';
  }

  /** What the bot's Connect shows: the subscription link, the devices, the account page to manage them. */
  async connect(from: BotUser): Promise<DeviceList & { accountUrl: string }> {
    const user = await this.users.telegramAccount(from.tgId, from.username);
    const list = await this.devices.list(user.id);
    return { ...list, accountUrl: await this.areaLink('account', user.id) };
  }

  /** The partner (syndicate) area, with a fresh token. */
  async syndicateLink(from: BotUser): Promise<string> {
    const user = await this.users.telegramAccount(from.tgId, from.username);
    return this.areaLink('syndicate', user.id);
  }

  private async runBranch(userId: string, request: StartRequest): Promise<StartBranch> {
    switch (request.kind) {
      case 'partner':
        return {
          kind: 'partner',
          code: request.code,
          result: await this.attach(userId, request.code),
        };
      case 'referral':
        return {
          kind: 'referral',
          attached: await this.users.attachReferrer(userId, request.referrerTgId),
        };
      case 'login': {
        const opened = await this.auth.openLoginCode(request.code, userId);
        return { kind: 'login', code: request.code, createdAt: opened?.createdAt ?? null };
      }
      case 'plain':
        return { kind: 'plain' };
    }
  }

  /** `p_<code>`: the partner attach of the HTTP route, first wins. */
  private async attach(
    userId: string,
    code: string,
  ): Promise<Extract<StartBranch, { kind: 'partner' }>['result']> {
    try {
      return (await this.partners.attachToPartner(userId, code)).changed ? 'attached' : 'kept';
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // ALREADY_ATTACHED: another partner won first. NOT_FOUND, or a partner's own code: not valid.
      return error.code === 'ALREADY_ATTACHED' ? 'other' : 'unknown';
    }
  }

  private async areaLinks(userId: string): Promise<AreaLinks> {
    const [account, plans, syndicate] = await Promise.all(
      AREAS.map((area) => this.areaLink(area, userId)),
    );
    return { account, plans, syndicate };
  }

  private async areaLink(area: (typeof AREAS)[number], userId: string): Promise<string> {
    const token = await this.auth.issueBootstrapToken(userId);
    return `${this.settings.appUrl}/${area}?bootstrap=${encodeURIComponent(token)}`;
  }
}
