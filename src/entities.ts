import { AUDIT_ENTITIES } from './audit/audit.entities';
import { AUTH_ENTITIES } from './auth/auth.entities';
import { BILLING_ENTITIES } from './billing/billing.entities';
import { BOT_ENTITIES } from './bot/bot.entities';
import { GAME_ENTITIES } from './game/game.entities';
import { INTERNAL_ENTITIES } from './internal/internal.entities';
import { NODES_ENTITIES } from './nodes/nodes.entities';
import { PARTNERS_ENTITIES } from './partners/partners.entities';
import { SETTINGS_STORE_ENTITIES } from './settings-store/settings-store.entities';
import { TICKETS_ENTITIES } from './tickets/tickets.entities';
import { USERS_ENTITIES } from './users/users.entities';

/**
 * Every entity of the service, for the data sources built outside the app: the TypeORM CLI
 * (src/cli-data-source.ts), the one-off commands, the tests and the benchmarks. In the app each
 * feature module registers its own (`TypeOrmModule.forFeature`); src/entities.spec.ts holds the
 * two sets equal.
 */
export const ENTITIES = [
  ...SETTINGS_STORE_ENTITIES,
  ...USERS_ENTITIES,
  ...AUTH_ENTITIES,
  ...BILLING_ENTITIES,
  ...PARTNERS_ENTITIES,
  ...GAME_ENTITIES,
  ...TICKETS_ENTITIES,
  ...AUDIT_ENTITIES,
  ...NODES_ENTITIES,
  ...INTERNAL_ENTITIES,
  ...BOT_ENTITIES,
];
