import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { toUserResponse, type UserResponse } from './dto/user.response';
import { NoUserCondition } from './users.errors';
import { UsersRepository } from './users.repository';

@Injectable()
export class UsersService {
  constructor(
    private readonly users: UsersRepository,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /** The user as the contract shows it, with the traffic limit that applies to it now. */
  async view(userId: string): Promise<UserResponse> {
    const { user, defaultLimitBytes } = await this.withNoUser(() =>
      this.users.getWithDefaults(userId),
    );
    return toUserResponse(user, this.effectiveDefault(defaultLimitBytes));
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
