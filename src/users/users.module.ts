import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersController } from './users.controller';
import { AccountsRepository } from './accounts.repository';
import { ReferralsRepository } from './referrals.repository';
import { SubscriptionsRepository } from './subscriptions.repository';
import { UserTrafficRepository } from './user-traffic.repository';
import { UsersService } from './users.service';
import { USERS_ENTITIES } from './users.entities';

/** The users table's repositories, one per kind of change to a user row. */
const REPOSITORIES = [
  AccountsRepository,
  SubscriptionsRepository,
  ReferralsRepository,
  UserTrafficRepository,
];

@Module({
  imports: [TypeOrmModule.forFeature(USERS_ENTITIES)],
  controllers: [UsersController],
  providers: [...REPOSITORIES, UsersService],
  exports: [...REPOSITORIES, UsersService],
})
export class UsersModule {}
