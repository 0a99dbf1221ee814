import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors';
import { keysetPage, type Page, type PageQuery, pagePosition } from '../common/pagination';
import { AccountsRepository } from '../users/accounts.repository';
import { ReferralsRepository } from '../users/referrals.repository';
import { UsersService } from '../users/users.service';
import { type CommissionRecord, PartnersRepository } from './partners.repository';

/** The partner a buyer is attached to after `attachToPartner`. */
export interface Attachment {
  partnerId: string;
  partnerCode: string;
  /** False when the buyer already had this partner: nothing changed. */
  changed: boolean;
}

/** A partner's money in one currency, in minor units. */
export interface Balance {
  currency: string;
  earned: bigint;
  /** Pending and approved withdrawals. */
  requested: bigint;
  paid: bigint;
  /** earned − requested − paid; never negative. */
  available: bigint;
}

export interface Earnings {
  partnerCode: string | null;
  commissionPercent: string | null;
  balances: Balance[];
  /** The partner's commissions, newest first. */
  recent: Page<CommissionRecord>;
}

/** Partners: buyers attached to them, and what those buyers' purchases earned them. */
@Injectable()
export class PartnersService {
  constructor(
    private readonly partners: PartnersRepository,
    private readonly accounts: AccountsRepository,
    private readonly referrals: ReferralsRepository,
    private readonly users: UsersService,
  ) {}

  /**
   * Attaches the buyer to the partner with this code when it has none yet; the first attachment
   * wins, also against racing ones. The same partner again changes nothing. The HTTP route and
   * the bot's `/start p_<code>` both come here.
   */
  async attachToPartner(buyerId: string, partnerCode: string): Promise<Attachment> {
    const partner = await this.referrals.findPartnerByCode(partnerCode);
    if (!partner) throw new AppError('NOT_FOUND', 'no partner has this code');
    if (partner.id === buyerId) {
      throw new AppError('CONFLICT', 'a partner cannot attach to itself');
    }
    const result = await this.users.withNoUser(() =>
      this.referrals.attachToPartner(buyerId, partner.id),
    );
    if (!result.attached && result.current !== partner.id) {
      throw new AppError('ALREADY_ATTACHED', 'you are already attached to another partner');
    }
    return { partnerId: partner.id, partnerCode: partner.partnerCode, changed: result.attached };
  }

  async earnings(partnerId: string, page: PageQuery): Promise<Earnings> {
    const { after, limit } = pagePosition(page);
    const [partner, balances, rows] = await Promise.all([
      this.users.withNoUser(() => this.accounts.getById(partnerId)),
      this.balances(partnerId),
      this.partners.commissionsPage(partnerId, after, limit + 1),
    ]);
    return {
      partnerCode: partner.partnerCode,
      commissionPercent: partner.commissionPercent,
      balances,
      recent: keysetPage(rows, limit),
    };
  }

  /**
   * The partner's balances, every currency or one. Inside a transaction holding the partner's
   * lock, the figures stay true until it commits.
   */
  async balances(partnerId: string, currency?: string): Promise<Balance[]> {
    const totals = await this.partners.balances(partnerId, currency);
    return totals.map((row) => {
      const [earned, requested, paid] = [
        BigInt(row.earned),
        BigInt(row.requested),
        BigInt(row.paid),
      ];
      return {
        currency: row.currency,
        earned,
        requested,
        paid,
        available: earned - requested - paid,
      };
    });
  }
}
