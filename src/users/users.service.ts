import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import type { UserView } from './dto/user.response';
import type { User } from './entities/user.entity';
import { AccountsRepository, type UserWithDefaults } from './accounts.repository';
import { ReferralsRepository } from './referrals.repository';
import { defaultLimitOf } from './traffic-limit';
import { NoUserCondition } from './users.errors';

@Injectable()
export class UsersService {
  constructor(
    private readonly users: AccountsRepository,
    private readonly referrals: ReferralsRepository,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /**
   * The user with what its traffic limit falls back to (`trafficLimitOf`): its own override, else
   * its running subscription's plan's limit, else the default.
   */
  async view(userId: string): Promise<UserView> {
    return this.viewOf(await this.withNoUser(() => this.users.getWithDefaults(userId)));
  }

  /** `view` of a user already read with its defaults (the signed-in caller). */
  viewOf({ user, defaultLimitBytes, planLimitBytes }: UserWithDefaults): UserView {
    return {
      user,
      limits: {
        defaultBytes: this.effectiveDefault(defaultLimitBytes),
        planBytes: planLimitBytes === null ? null : BigInt(planLimitBytes),
      },
    };
  }

  /** Many users (lists), with the same limits as `view`. */
  async views(users: User[], defaultBytes: bigint): Promise<UserView[]> {
    const names = users.flatMap((user) => (user.planName === null ? [] : [user.planName]));
    const planLimits = await this.users.planLimits(names);
    return users.map((user) => {
      const planBytes = user.planName === null ? undefined : planLimits.get(user.planName);
      return {
        user,
        limits: { defaultBytes, planBytes: planBytes === undefined ? null : BigInt(planBytes) },
      };
    });
  }

  /** The Telegram account of this Telegram user, created on first contact. */
  telegramAccount(tgId: number, tgUsername: string | null): Promise<User> {
    return this.users.upsertTelegramUser(tgId, tgUsername);
  }

  /** The bot's `/start <tg_id>` referral: first wins, never oneself, only before a first payment. */
  attachReferrer(userId: string, referrerTgId: string): Promise<boolean> {
    return this.referrals.attachReferrerByTgId(userId, referrerTgId);
  }

  /** The default traffic limit, given the stored one (`defaultLimitOf`). */
  effectiveDefault(stored: string | null): bigint {
    return defaultLimitOf(stored, this.settings.trafficLimitDefaultBytes);
  }

  /** Runs a change of the user (its NO_USER a 404), then answers the user's view as it now is. */
  async changeThenView(userId: string, change: () => Promise<void>): Promise<UserView> {
    await this.withNoUser(change);
    return this.view(userId);
  }

  /** Maps the data layer's NO_USER condition to the contract's 404 NO_USER. */
  async withNoUser<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof NoUserCondition) throw new AppError('NO_USER', 'user not found');
      throw error;
    }
  }
}
