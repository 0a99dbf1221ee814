import type { BillingWorld } from './billing';
import { WALLET } from './billing';
import { controlClock } from './clock';
import { tonTransaction } from './toncenter';
import type { TestUser } from '../harness/factories';

/** How long the service reuses one look at toncenter (the contract's 5 s). */
const TX_CACHE_MS = 5_000;

export interface Purchase {
  invoiceId: string;
  /** Nanotons paid. */
  amount: string;
}

/**
 * Buying a plan with TON as a user does: order an invoice, pay it on chain (the fake toncenter
 * shows the transfer to our wallet with the invoice's comment), confirm it.
 */
export function tonShop(world: BillingWorld): {
  buy(buyer: TestUser, planName: string, currency: string): Promise<Purchase>;
} {
  const clock = controlClock(world.t);
  return {
    async buy(buyer, planName, currency) {
      const ordered = await world.t
        .http()
        .post('/api/v1/invoices')
        .set(buyer.bearer)
        .send({ plan_name: planName, currency, provider: 'ton' })
        .expect(201);
      const invoice = ordered.body as {
        id: string;
        amount: string;
        payment: { comment: string };
      };
      world.toncenter.transactions.push(
        tonTransaction({
          to: WALLET.toRawString().toUpperCase(),
          value: invoice.amount,
          comment: invoice.payment.comment,
        }),
      );
      clock.advance(TX_CACHE_MS);
      await world.t
        .http()
        .post(`/api/v1/invoices/${invoice.id}/confirm`)
        .set(buyer.bearer)
        .expect(200);
      return { invoiceId: invoice.id, amount: invoice.amount };
    },
  };
}
