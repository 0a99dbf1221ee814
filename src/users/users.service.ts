import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { toUserResponse, type UserResponse } from './dto/user.response';
import type { User } from './entities/user.entity';
import { NoUserCondition } from './users.errors';
import { UsersRepository } from './users.repository';

@Injectable()
export class UsersService {
  constructor(
    private readonly users: UsersRepository,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /**
   * The user as the contract shows it, with the traffic limit that applies to it now: its own
   * override, else its running subscription's plan's limit, else the default.
   */
  async view(userId: string): Promise<UserResponse> {
    const { user, defaultLimitBytes, planLimitBytes } = await this.withNoUser(() =>
      this.users.getWithDefaults(userId),
    );
    return toUserResponse(user, {
      defaultBytes: this.effectiveDefault(defaultLimitBytes),
      planBytes: planLimitBytes === null ? null : BigInt(planLimitBytes),
    });
  }

  /** Many users as the contract shows them (lists), with the same limits as `view`. */
  async views(users: User[], defaultBytes: bigint): Promise<UserResponse[]> {
    const names = users.flatMap((user) => (user.planName === null ? [] : [user.planName]));
    const planLimits = await this.users.planLimits(names);
    return users.map((user) => {
      const planBytes = user.planName === null ? undefined : planLimits.get(user.planName);
      return toUserResponse(user, {
        defaultBytes,
        planBytes: planBytes === undefined ? null : BigInt(planBytes),
      });
    });
  }

  effectiveDefault(stored: string | null): bigint {
    return stored === null ? this.settings.trafficLimitDefaultBytes : BigInt(stored);
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
