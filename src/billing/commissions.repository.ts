import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { sqlRows } from '../database/sql';

export interface NewCommission {
  partnerId: string;
  buyerId: string;
  invoiceId: string;
  planName: string;
  currency: string;
  priceMinor: bigint;
  percent: string;
  amountMinor: bigint;
}

/** The owner of `partner_commissions`. */
@Injectable()
export class CommissionsRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** One commission per invoice: a second insert for the same invoice changes nothing. */
  async insert(c: NewCommission): Promise<boolean> {
    const rows = await sqlRows<{ id: string }>(
      this.txHost.tx,
      `INSERT INTO partner_commissions
         (partner_id, buyer_id, invoice_id, plan_name, currency, price_minor, percent, amount_minor)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (invoice_id) DO NOTHING RETURNING id`,
      [
        c.partnerId,
        c.buyerId,
        c.invoiceId,
        c.planName,
        c.currency,
        c.priceMinor.toString(),
        c.percent,
        c.amountMinor.toString(),
      ],
    );
    return rows.length > 0;
  }
}
