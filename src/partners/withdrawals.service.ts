import { Injectable } from '@nestjs/common';
import { Transactional, TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { AUDIT_ACTIONS, AuditService } from '../audit/audit.service';
import { AppError } from '../common/errors';
import { keysetPage, type Page, type PageQuery, pagePosition } from '../common/pagination';
import { AccountsRepository } from '../users/accounts.repository';
import { UsersService } from '../users/users.service';
import type { WithdrawalState } from './entities/withdrawal-request.entity';
import {
  PartnersRepository,
  type WithdrawalFilter,
  type WithdrawalRecord,
} from './partners.repository';
import { PartnersService } from './partners.service';

export interface WithdrawalDraft {
  amount: bigint;
  currency: string;
  destination: string;
}

/** What staff can do to a withdrawal: from which states, to which. Anything else is refused. */
const DECISIONS = {
  approve: { from: ['pending'], to: 'approved', action: AUDIT_ACTIONS.withdrawalApproved },
  reject: {
    from: ['pending', 'approved'],
    to: 'rejected',
    action: AUDIT_ACTIONS.withdrawalRejected,
  },
  paid: { from: ['approved'], to: 'paid', action: AUDIT_ACTIONS.withdrawalPaid },
} as const satisfies Record<
  string,
  { from: readonly WithdrawalState[]; to: WithdrawalState; action: string }
>;

export type Decision =
  { kind: 'approve' } | { kind: 'reject'; reason: string } | { kind: 'paid'; txRef: string | null };

/**
 * Partners' withdrawal requests and staff decisions on them. A partner's balance never goes
 * negative: the check and the insert run under a lock on the partner's row, and every other move
 * either keeps `requested + paid` or lowers it.
 */
@Injectable()
export class WithdrawalsService {
  constructor(
    private readonly partners: PartnersRepository,
    private readonly earnings: PartnersService,
    private readonly usersRepository: AccountsRepository,
    private readonly users: UsersService,
    private readonly audit: AuditService,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {}

  /** 409 INSUFFICIENT_BALANCE when the amount is more than is available in that currency. */
  @Transactional()
  async request(partnerId: string, draft: WithdrawalDraft): Promise<WithdrawalRecord> {
    // Racing requests of one partner wait here, each seeing the ones committed before it.
    await this.users.withNoUser(() => this.usersRepository.lockOne(partnerId));
    const [balance] = await this.earnings.balances(partnerId, draft.currency);
    const available = balance?.available ?? 0n;
    if (draft.amount > available) {
      throw new AppError(
        'INSUFFICIENT_BALANCE',
        `only ${available} minor units of ${draft.currency} are available`,
      );
    }
    return this.partners.insertWithdrawal({ partnerId, ...draft });
  }

  ownPage(partnerId: string, page: PageQuery): Promise<Page<WithdrawalRecord>> {
    return this.page({ partnerId }, page);
  }

  allPage(status: WithdrawalState | undefined, page: PageQuery): Promise<Page<WithdrawalRecord>> {
    return this.page({ status }, page);
  }

  /**
   * Applies a staff decision, audited with who made it and why, in one transaction. A move its
   * current state does not allow is 409 WITHDRAWAL_STATE and changes nothing.
   */
  @Transactional()
  async decide(actorId: string, id: string, decision: Decision): Promise<WithdrawalRecord> {
    const rule = DECISIONS[decision.kind];
    const current = await this.partners.lockWithdrawal(id);
    if (!current) throw new AppError('NOT_FOUND', 'withdrawal not found');
    if (!(rule.from as readonly WithdrawalState[]).includes(current.status)) {
      throw new AppError(
        'WITHDRAWAL_STATE',
        `a ${current.status} withdrawal cannot be moved to ${rule.to}`,
      );
    }
    const note = noteOf(decision);
    const moved = await this.partners.moveWithdrawal(id, [current.status], {
      to: rule.to,
      decidedBy: actorId,
      ...note,
    });
    // The row is locked and its state checked: the move cannot miss.
    if (!moved) throw new Error(`withdrawal ${id} changed under its lock`);
    // On the decision's own transaction: the entry exists exactly when the move does.
    await this.audit.record({
      actorId,
      action: rule.action,
      targetType: 'withdrawal',
      targetId: id,
      before: { status: current.status },
      after: {
        status: moved.status,
        ...(note.reason === undefined ? {} : { reason: note.reason }),
        ...(note.txRef === undefined ? {} : { tx_ref: note.txRef }),
      },
    });
    return moved;
  }

  private async page(filter: WithdrawalFilter, page: PageQuery): Promise<Page<WithdrawalRecord>> {
    const { after, limit } = pagePosition(page);
    const rows = await this.partners.withdrawalsPage(filter, after, limit + 1);
    return keysetPage(rows, limit);
  }
}

/** What staff said with a decision: stored on the withdrawal and in the audit entry. */
function noteOf(decision: Decision): { reason?: string; txRef?: string | null } {
  switch (decision.kind) {
    case 'approve':
      return {};
    case 'reject':
      return { reason: decision.reason };
    case 'paid':
      return { txRef: decision.txRef };
  }
}
