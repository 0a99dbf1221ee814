import { Injectable } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { AUDIT_ACTIONS, AuditService } from '../audit/audit.service';
import { hashPassword } from '../auth/passwords';
import { SessionsService } from '../auth/sessions.service';
import type { AuthUser } from '../auth/guards/auth-user';
import { AppError } from '../common/errors';
import type { UserView } from '../users/dto/user.response';
import { AccountsRepository } from '../users/accounts.repository';
import { SubscriptionsRepository } from '../users/subscriptions.repository';
import { UserTrafficRepository } from '../users/user-traffic.repository';
import { UsersService } from '../users/users.service';
import { refuseSelfOrStaff } from './acting-on';

/** The plan name of a subscription staff give a user that has none running, unless they name one. */
export const MANUAL_PLAN_NAME = 'manual';

/** A move of a user's subscription end by staff. */
export interface SubscriptionMove {
  days: number;
  planName: string | null;
  reason: string;
  /**
   * Days a subscription this starts waits for its first connection (`starts: on_first_use`);
   * null: it starts now. A running subscription is only moved.
   */
  holdDays: number | null;
}

/**
 * What staff do to one account: move its subscription, reset its used traffic, block and unblock
 * it, set a staff account's password. Each runs in one transaction with the user's row locked from
 * the read to the audit entry (who, what, before and after, and the reason), so concurrent actions
 * on one user apply one after another, each exactly once. None on the actor's own account, and on
 * a staff account only by the owner (`refuseSelfOrStaff`).
 */
@Injectable()
export class UserActionsService {
  constructor(
    private readonly accounts: AccountsRepository,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly traffic: UserTrafficRepository,
    private readonly sessions: SessionsService,
    private readonly users: UsersService,
    private readonly audit: AuditService,
  ) {}

  async moveSubscription(actor: AuthUser, id: string, move: SubscriptionMove): Promise<UserView> {
    return this.users.changeThenView(id, () => this.applyMove(actor, id, move));
  }

  @Transactional()
  private async applyMove(actor: AuthUser, id: string, move: SubscriptionMove): Promise<void> {
    const user = await this.accounts.lockOne(id);
    refuseSelfOrStaff(actor, user);
    const moved = await this.subscriptions.moveEnd(
      id,
      move.days,
      move.planName,
      MANUAL_PLAN_NAME,
      move.days > 0 ? move.holdDays : null,
    );
    if (!moved) throw new Error(`user ${id} vanished under its lock`);
    await this.record(actor.id, AUDIT_ACTIONS.subscriptionMoved, id, move.reason, {
      before: { plan_name: user.planName, expires_at: user.subscriptionExpiresAt },
      after: { plan_name: moved.planName, expires_at: moved.expiresAt, days: move.days },
    });
  }

  async resetTraffic(actor: AuthUser, id: string, reason: string): Promise<UserView> {
    return this.users.changeThenView(id, () => this.applyTrafficReset(actor, id, reason));
  }

  @Transactional()
  private async applyTrafficReset(actor: AuthUser, id: string, reason: string): Promise<void> {
    const user = await this.accounts.lockOne(id);
    refuseSelfOrStaff(actor, user);
    await this.traffic.resetUsed(id);
    await this.record(actor.id, AUDIT_ACTIONS.trafficReset, id, reason, {
      before: { traffic_used_bytes: Number(user.trafficUsedBytes) },
      after: { traffic_used_bytes: 0 },
    });
  }

  /** Blocks the account and ends its sessions, together. Blocking a blocked account changes nothing. */
  async block(actor: AuthUser, id: string, reason: string): Promise<UserView> {
    return this.users.changeThenView(id, () => this.applyBlock(actor, id, reason));
  }

  @Transactional()
  private async applyBlock(actor: AuthUser, id: string, reason: string): Promise<void> {
    const user = await this.accounts.lockOne(id);
    refuseSelfOrStaff(actor, user);
    if (user.blockedAt !== null) return;
    const blockedAt = await this.accounts.setBlocked(id, true);
    await this.sessions.revokeAll(id);
    await this.record(actor.id, AUDIT_ACTIONS.userBlocked, id, reason, {
      before: { blocked_at: null },
      after: { blocked_at: blockedAt },
    });
  }

  /** Lifts a block (the account signs in again); an account that is not blocked is left alone. */
  async unblock(actor: AuthUser, id: string): Promise<UserView> {
    return this.users.changeThenView(id, () => this.applyUnblock(actor, id));
  }

  @Transactional()
  private async applyUnblock(actor: AuthUser, id: string): Promise<void> {
    const user = await this.accounts.lockOne(id);
    refuseSelfOrStaff(actor, user);
    if (user.blockedAt === null) return;
    await this.accounts.setBlocked(id, false);
    await this.record(actor.id, AUDIT_ACTIONS.userUnblocked, id, null, {
      before: { blocked_at: user.blockedAt },
      after: { blocked_at: null },
    });
  }

  /** A staff account's new password (the owner's action); every session of it ends. */
  async setStaffPassword(actor: AuthUser, id: string, password: string): Promise<void> {
    const hash = await hashPassword(password);
    await this.users.withNoUser(() => this.applyPassword(actor, id, hash));
  }

  @Transactional()
  private async applyPassword(actor: AuthUser, id: string, passwordHash: string): Promise<void> {
    const user = await this.accounts.lockOne(id);
    refuseSelfOrStaff(actor, user);
    if (user.role === null) {
      throw new AppError('CONFLICT', 'only staff accounts have a password to reset');
    }
    await this.accounts.updatePasswordHash(id, passwordHash);
    await this.sessions.revokeAll(id);
    // Never the password or its hash: only that it changed.
    await this.record(actor.id, AUDIT_ACTIONS.passwordReset, id, null, {
      before: null,
      after: { password_changed: true, sessions_ended: true },
    });
  }

  private record(
    actorId: string,
    action: string,
    userId: string,
    reason: string | null,
    change: { before: Record<string, unknown> | null; after: Record<string, unknown> },
  ): Promise<void> {
    return this.audit.record({
      actorId,
      action,
      targetType: 'user',
      targetId: userId,
      before: change.before,
      after: reason === null ? change.after : { ...change.after, reason },
    });
  }
}
