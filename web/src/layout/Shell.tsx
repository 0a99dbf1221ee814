import { AppShell, Burger, Button, Group, NavLink, SegmentedControl, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { ReactNode } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { api, forgetSession } from '../api/client';
import { isStaffRole, useMe } from '../api/hooks';
import { type Language, LANGUAGES, useI18n } from '../i18n/i18n';
import type { MessageKey } from '../i18n/en';

export function Shell({ children }: { children: ReactNode }) {
  const { t, language, setLanguage } = useI18n();
  const [opened, { toggle, close }] = useDisclosure();
  const me = useMe().data ?? null;
  const location = useLocation();
  const navigate = useNavigate();

  const links: [string, MessageKey][] = me
    ? [
        ['/account', 'nav.account'],
        ['/plans', 'nav.plans'],
        ...(me.role === 'partner' ? [['/syndicate', 'nav.syndicate'] as [string, MessageKey]] : []),
        ['/support', 'nav.support'],
        ['/game', 'nav.game'],
        ...(isStaffRole(me.role) ? [['/staff', 'nav.staff'] as [string, MessageKey]] : []),
      ]
    : [['/plans', 'nav.plans']];

  async function signOut() {
    await api.logout().catch(() => undefined);
    forgetSession();
    await navigate('/');
  }

  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 200, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger
              opened={opened}
              onClick={toggle}
              hiddenFrom="sm"
              size="sm"
              aria-label={t('nav.menu')}
            />
            <Text fw={700} size="lg">
              {t('app.name')}
            </Text>
          </Group>
          <Group gap="xs" wrap="nowrap">
            <SegmentedControl
              size="xs"
              aria-label={t('nav.language')}
              value={language}
              onChange={(value) => setLanguage(value as Language)}
              data={LANGUAGES.map((code) => ({ value: code, label: code.toUpperCase() }))}
            />
            {me && (
              <Button size="xs" variant="default" onClick={() => void signOut()}>
                {t('nav.signOut')}
              </Button>
            )}
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label={t('nav.menu')}>
        {links.map(([to, label]) => (
          <NavLink
            key={to}
            component={Link}
            to={to}
            label={t(label)}
            variant="filled"
            active={location.pathname === to || location.pathname.startsWith(`${to}/`)}
            onClick={close}
          />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>{children}</AppShell.Main>
    </AppShell>
  );
}
