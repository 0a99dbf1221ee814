import { Module } from '@nestjs/common';
import { UsersController } from './users.controller';
import { AccountsRepository } from './accounts.repository';
import { ReferralsRepository } from './referrals.repository';
import { SubscriptionsRepository } from './subscriptions.repository';
import { UserTrafficRepository } from './user-traffic.repository';
import { UsersService } from './users.service';

/** The users table's repositories, one per kind of change to a user row. */
const REPOSITORIES = [
  AccountsRepository,
  SubscriptionsRepository,
  ReferralsRepository,
  UserTrafficRepository,
];

@Module({
  controllers: [UsersController],
  providers: [...REPOSITORIES, UsersService],
  exports: [...REPOSITORIES, UsersService],
})
export class UsersModule {}
