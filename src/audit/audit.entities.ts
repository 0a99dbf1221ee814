import { AuditLogEntry } from './entities/audit-log-entry.entity';

/** The entities of audit/: AuditModule registers them, src/entities.ts joins them for the CLI. */
export const AUDIT_ENTITIES = [AuditLogEntry];
