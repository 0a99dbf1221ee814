import { ApiProperty } from '@nestjs/swagger';
import { ROLES, type User } from '../entities/user.entity';
import type { SubscriptionRecord } from '../subscriptions.repository';
import { isSubscriptionActive } from '../subscription-active';
import { type TrafficLimits, trafficLimitOf } from '../traffic-limit';

export class SubscriptionView {
  @ApiProperty({ example: 'monthly' })
  plan_name: string;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;

  @ApiProperty({ description: 'the days run now (false while waiting for the first connection)' })
  active: boolean;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: "when the subscription's days began; null while waiting for the first connection",
  })
  starts_at: string | null;

  @ApiProperty({
    description:
      'an on_first_use subscription whose days begin with the first connection (or when the hold ends)',
  })
  waiting_first_use: boolean;
}

export class TrafficView {
  @ApiProperty({ description: 'bytes', example: 107374182400 })
  limit_bytes: number;

  @ApiProperty({ description: 'bytes used in the current period', example: 0 })
  used_bytes: number;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: "the next reset of used traffic to 0 (the plan's traffic_reset); null when none",
  })
  resets_at: string | null;
}

export class UserResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: ROLES, nullable: true, type: String })
  role: User['role'];

  @ApiProperty({ type: String, nullable: true })
  username: string | null;

  @ApiProperty({ type: Number, nullable: true })
  tg_id: number | null;

  @ApiProperty()
  can_manage_nodes: boolean;

  @ApiProperty({ type: String, nullable: true })
  partner_code: string | null;

  @ApiProperty({ type: Number, nullable: true, example: 12.5 })
  commission_percent: number | null;

  @ApiProperty({ type: SubscriptionView, nullable: true })
  subscription: SubscriptionView | null;

  @ApiProperty({ type: TrafficView })
  traffic: TrafficView;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'when staff blocked the account; null while it is not blocked',
  })
  blocked_at: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

/** A user with the limits its traffic limit falls back to: what services hand out. */
export interface UserView {
  user: User;
  limits: TrafficLimits;
}

/** `toUserResponse` of a view. */
export function toUserViewResponse(view: UserView): UserResponse {
  return toUserResponse(view.user, view.limits);
}

/** The contract's user shape, with the traffic limit that applies to the user (`trafficLimitOf`). */
export function toUserResponse(user: User, limits: TrafficLimits, now = new Date()): UserResponse {
  const expiresAt = user.subscriptionExpiresAt;
  return {
    id: user.id,
    role: user.role,
    username: user.username,
    tg_id: user.tgId === null ? null : Number(user.tgId),
    can_manage_nodes: user.canManageNodes,
    partner_code: user.partnerCode,
    commission_percent: user.commissionPercent === null ? null : Number(user.commissionPercent),
    subscription:
      user.planName && expiresAt
        ? subscriptionViewOf(
            {
              planName: user.planName,
              expiresAt,
              startedAt: user.subscriptionStartedAt,
              onHoldUntil: user.subscriptionOnHoldUntil,
              blockedAt: user.blockedAt,
            },
            now,
          )
        : null,
    traffic: {
      limit_bytes: Number(trafficLimitOf(user, limits, now)),
      used_bytes: Number(user.trafficUsedBytes),
      resets_at:
        user.trafficResetAt !== null && expiresAt !== null && expiresAt > now
          ? user.trafficResetAt.toISOString()
          : null,
    },
    blocked_at: user.blockedAt === null ? null : user.blockedAt.toISOString(),
    created_at: user.createdAt.toISOString(),
  };
}

/**
 * A subscription as its user sees it: waiting while an on_first_use hold lasts (it starts at the
 * first counted traffic, else when the hold ends), active as `isSubscriptionActive` says otherwise.
 */
export function subscriptionViewOf(
  subscription: SubscriptionRecord & { blockedAt: Date | null },
  now: Date,
): SubscriptionView {
  const { expiresAt, onHoldUntil: hold, blockedAt } = subscription;
  const waiting = hold !== null && hold > now;
  const startsAt = waiting ? null : (subscription.startedAt ?? hold);
  return {
    plan_name: subscription.planName,
    expires_at: expiresAt.toISOString(),
    active: !waiting && isSubscriptionActive({ subscriptionExpiresAt: expiresAt, blockedAt }, now),
    starts_at: startsAt === null ? null : startsAt.toISOString(),
    waiting_first_use: waiting,
  };
}
