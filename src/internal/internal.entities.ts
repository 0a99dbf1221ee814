import { TrafficReport } from './entities/traffic-report.entity';
import { UsedSessionToken } from './entities/used-session-token.entity';

/**
 * The entities of internal/: InternalModule registers them, src/entities.ts joins them for the CLI.
 */
export const INTERNAL_ENTITIES = [UsedSessionToken, TrafficReport];
