import { Injectable } from '@nestjs/common';
import {
  type AuditFilter,
  AuditRepository,
  type AuditRow,
  type NewAuditEntry,
} from './audit.repository';
import { keysetPage, type Page, type PageQuery, pagePosition } from '../common/pagination';

/** Actions recorded so far; other features add theirs. */
export const AUDIT_ACTIONS = {
  staffCreated: 'staff.created',
  totpEnabled: 'staff.totp_enabled',
  totpDisabled: 'staff.totp_disabled',
  totpReset: 'staff.totp_reset',
  recoveryCodeUsed: 'staff.recovery_code_used',
  nodeAccessChanged: 'user.node_access_changed',
  trafficLimitChanged: 'user.traffic_limit_changed',
  defaultTrafficLimitChanged: 'settings.traffic_limit_default_changed',
  subscriptionMoved: 'user.subscription_moved',
  trafficReset: 'user.traffic_reset',
  userBlocked: 'user.blocked',
  userUnblocked: 'user.unblocked',
  passwordReset: 'user.password_reset',
  withdrawalApproved: 'withdrawal.approved',
  withdrawalRejected: 'withdrawal.rejected',
  withdrawalPaid: 'withdrawal.paid',
} as const;

export type AuditEntry = NewAuditEntry;

/** The audit log: who changed access, limits or money, from what to what, and when. */
@Injectable()
export class AuditService {
  constructor(private readonly audit: AuditRepository) {}

  /**
   * Records one action, in the transaction that makes the change (the caller is @Transactional),
   * so the entry exists exactly when the change does.
   */
  record(entry: AuditEntry): Promise<void> {
    return this.audit.insert(entry);
  }

  /** Newest first, the entries that match every given filter. */
  async list(filter: AuditFilter, query: PageQuery): Promise<Page<AuditRow>> {
    const { after, limit } = pagePosition(query);
    return keysetPage(await this.audit.page(filter, limit + 1, after), limit);
  }
}
