import { Alert, Stack, Tabs, Text, Title } from '@mantine/core';
import { Navigate, Route, Routes, useLocation, useNavigate } from 'react-router';
import type { User } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { CONSOLE_PAGES, SECURITY_PAGE } from './pages';
import { useSecondFactorStatus } from './security/queries';

/**
 * The console of a signed-in staff account: a tab per page it may open, the page below. When the
 * operator requires a second factor of staff and the account has none yet, only its Security page.
 */
export function Console({ user }: { user: User }) {
  const { t } = useI18n();
  const location = useLocation();
  const navigate = useNavigate();
  const secondFactor = useSecondFactorStatus();
  const mustEnrol = secondFactor.data?.required === true && !secondFactor.data.enabled;
  const pages = CONSOLE_PAGES.filter(
    (page) => page.allowed(user) && (!mustEnrol || page.path === SECURITY_PAGE),
  );
  const current = location.pathname.replace(/^\/staff\/?/, '').split('/')[0] ?? '';

  return (
    <Stack>
      <Title order={1}>{t('staff.title')}</Title>
      {/* Gray 7: the dimmed gray is under a 4.5:1 contrast on white. */}
      <Text size="sm" c="gray.7">
        {t('staff.signedInAs', { name: user.username ?? user.id, role: user.role ?? '' })}
      </Text>
      {mustEnrol && <Alert color="yellow">{t('console.security.required')}</Alert>}
      {pages.length > 0 && (
        <Tabs value={current} onChange={(value) => value && void navigate(`/staff/${value}`)}>
          <Tabs.List aria-label={t('staff.title')}>
            {pages.map((page) => (
              <Tabs.Tab key={page.path} value={page.path}>
                {t(page.label)}
              </Tabs.Tab>
            ))}
          </Tabs.List>
        </Tabs>
      )}
      <Routes>
        {pages.map((page) => (
          <Route key={page.path} path={`${page.path}/*`} element={page.element} />
        ))}
        <Route
          path="*"
          element={pages.length > 0 ? <Navigate to={`/staff/${pages[0].path}`} replace /> : null}
        />
      </Routes>
    </Stack>
  );
}
