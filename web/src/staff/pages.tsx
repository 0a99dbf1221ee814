import type { ReactNode } from 'react';
import type { User } from '../api/client';
import type { MessageKey } from '../i18n/en';
import { access } from './access';
import { AuditPage } from './audit/AuditPage';
import { NodesPage } from './nodes/NodesPage';
import { OverviewPage } from './overview/OverviewPage';
import { PaymentsPage } from './payments/PaymentsPage';
import { PayoutsPage } from './payouts/PayoutsPage';
import { StaffPlansPage } from './plans/StaffPlansPage';
import { SettingsPage } from './settings/SettingsPage';
import { SecurityPage } from './security/SecurityPage';
import { TicketsPage } from './tickets/TicketsPage';
import { UsersPage } from './users/UsersPage';

/** One page of the console: its address under /staff, its tab, who sees it, what it shows. */
export interface ConsolePage {
  /** Relative to /staff, without a leading slash; sub-pages go under `${path}/*`. */
  path: string;
  label: MessageKey;
  /** One of `access` in ./access: the guard of the routes the page calls. */
  allowed: (user: User) => boolean;
  element: ReactNode;
}

/**
 * The console's pages, in the order of their tabs. A signed-in staff account sees the tabs it is
 * allowed and lands on the first of them.
 */
/** The page a staff account may open before it has the second factor the operator requires. */
export const SECURITY_PAGE = 'security';

export const CONSOLE_PAGES: ConsolePage[] = [
  {
    path: 'overview',
    label: 'console.overview.tab',
    allowed: access.staff,
    element: <OverviewPage />,
  },
  { path: 'users', label: 'console.users.tab', allowed: access.staff, element: <UsersPage /> },
  { path: 'plans', label: 'console.plans.tab', allowed: access.staff, element: <StaffPlansPage /> },
  {
    path: 'payments',
    label: 'console.payments.tab',
    allowed: access.staff,
    element: <PaymentsPage />,
  },
  {
    path: 'payouts',
    label: 'console.payouts.tab',
    allowed: access.staff,
    element: <PayoutsPage />,
  },
  {
    path: 'tickets',
    label: 'console.tickets.tab',
    allowed: access.support,
    element: <TicketsPage />,
  },
  { path: 'nodes', label: 'console.nodes.tab', allowed: access.nodes, element: <NodesPage /> },
  { path: 'audit', label: 'console.audit.tab', allowed: access.owner, element: <AuditPage /> },
  {
    path: 'settings',
    label: 'console.settings.tab',
    allowed: access.staff,
    element: <SettingsPage />,
  },
  {
    path: SECURITY_PAGE,
    label: 'console.security.tab',
    allowed: access.anyStaff,
    element: <SecurityPage />,
  },
];
