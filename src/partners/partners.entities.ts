import { WithdrawalRequest } from './entities/withdrawal-request.entity';

/**
 * The entities of partners/: PartnersModule registers them, src/entities.ts joins them for the CLI.
 */
export const PARTNERS_ENTITIES = [WithdrawalRequest];
