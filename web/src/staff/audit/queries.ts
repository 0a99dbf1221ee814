/** The console's call for the audit log, and its query key. */
import { type ListQuery, useCursorList } from '../api';

export const auditKeys = { all: ['staff', 'audit'] as const };

/** `GET /admin/audit`, newest first, narrowed by the route's filters. */
export const useAuditLog = (query: ListQuery<'/admin/audit'>) =>
  useCursorList(auditKeys.all, '/admin/audit', query);
