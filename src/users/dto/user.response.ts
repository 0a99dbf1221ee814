import { ApiProperty } from '@nestjs/swagger';
import { ROLES, type User } from '../entities/user.entity';
import { type TrafficLimits, trafficLimitOf } from '../traffic-limit';

export class SubscriptionView {
  @ApiProperty({ example: 'monthly' })
  plan_name: string;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;

  @ApiProperty()
  active: boolean;
}

export class TrafficView {
  @ApiProperty({ description: 'bytes', example: 107374182400 })
  limit_bytes: number;

  @ApiProperty({ description: 'bytes used in the current period', example: 0 })
  used_bytes: number;
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
        ? { plan_name: user.planName, expires_at: expiresAt.toISOString(), active: expiresAt > now }
        : null,
    traffic: {
      limit_bytes: Number(trafficLimitOf(user, limits, now)),
      used_bytes: Number(user.trafficUsedBytes),
    },
    blocked_at: user.blockedAt === null ? null : user.blockedAt.toISOString(),
    created_at: user.createdAt.toISOString(),
  };
}
