import { randomUUID } from 'node:crypto';
import type { Invoice } from '../../src/billing/entities/invoice.entity';

/** What the business's figures (GET /admin/stats, the console's overview) are seeded with. */
export const DAY = 86_400_000;

/** `YYYY-MM-DD` of the UTC day `ago` days before today. */
export const dayAgo = (ago: number): string =>
  new Date(Date.now() - ago * DAY).toISOString().slice(0, 10);

/** Noon (UTC) of that day: well inside it, whenever the test runs. */
export const noonAgo = (ago: number): Date => new Date(`${dayAgo(ago)}T12:00:00.000Z`);

/** An invoice row of `userId`: a paid monthly plan for 4.99 USD by Telegram, unless `fields` say otherwise. */
export function invoiceRow(userId: string, fields: Partial<Invoice> = {}): Partial<Invoice> {
  return {
    id: randomUUID(),
    userId,
    planName: 'monthly',
    currency: 'USD',
    amount: '499',
    provider: 'telegram',
    status: 'paid',
    payment: {},
    expiresAt: new Date(Date.now() + DAY),
    ...fields,
  };
}
