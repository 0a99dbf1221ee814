import { TransactionHost } from '@nestjs-cls/transactional';
import { type TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { AuditRepository } from '../audit/audit.repository';
import { AuditService } from '../audit/audit.service';
import { type Settings } from '../config/settings';
import { startCommandContext } from '../database/command-context';
import { ENTITIES } from '../entities';
import { PLAN_AUDIT_ACTIONS } from './billing.constants';
import { PlansRepository, type PlanToSave } from './plans.repository';
import { planAuditValues } from './plans.service';

const GIB = 1024 ** 3;

/** Example plans for a new installation; prices in minor units of each currency. */
export const DEMO_PLANS: PlanToSave[] = [
  {
    name: 'monthly',
    durationDays: 30,
    trafficLimitBytes: String(100 * GIB),
    active: true,
    prices: { USD: '499', EUR: '459', RUB: '45000' },
  },
  {
    name: 'quarterly',
    durationDays: 90,
    trafficLimitBytes: String(300 * GIB),
    active: true,
    prices: { USD: '1299', EUR: '1199', RUB: '119000' },
  },
  {
    name: 'yearly',
    durationDays: 365,
    trafficLimitBytes: String(1200 * GIB),
    active: true,
    prices: { USD: '4499', EUR: '4199', RUB: '399000' },
  },
];

/**
 * `node dist/main.js --seed-demo` (`npm run seed:demo`): creates the demo plans that do not
 * exist yet and exits. A plan of the same name is kept as it is, whatever the operator made of it,
 * so running it again, or on a live installation, changes nothing. Returns the exit code.
 */
export async function runSeedDemo(settings: Settings, databaseUrl: string): Promise<number> {
  const context = await startCommandContext(settings, databaseUrl, ENTITIES, [
    PlansRepository,
    AuditRepository,
    AuditService,
  ]);
  try {
    const plans = context.get(PlansRepository);
    const audit = context.get(AuditService);
    const txHost = context.get<TransactionHost<TransactionalAdapterTypeOrm>>(TransactionHost);
    for (const plan of DEMO_PLANS) {
      // The plan and its audit entry commit together.
      const created = await txHost.withTransaction(async () => {
        if (!(await plans.insertPlanIfAbsent(plan))) return false;
        const saved = (await plans.findPlan(plan.name))!;
        await audit.record({
          actorId: null,
          action: PLAN_AUDIT_ACTIONS.created,
          targetType: 'plan',
          targetId: plan.name,
          before: null,
          after: planAuditValues(saved),
        });
        return true;
      });
      process.stdout.write(
        created
          ? `plan ${plan.name}: created, ${plan.durationDays} days, ${Object.keys(plan.prices).join(', ')}\n`
          : `plan ${plan.name}: kept, a plan of that name exists and is left as it is\n`,
      );
    }
    return 0;
  } finally {
    await context.close();
  }
}
