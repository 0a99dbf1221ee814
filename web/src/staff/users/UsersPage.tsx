/**
 * The console's Users page: a search over every account (username, Telegram username, Telegram id
 * or account id), the matching accounts page by page, a form creating staff accounts, and each
 * account's own page under /staff/users/<id>.
 */
import {
  Anchor,
  Button,
  Card,
  Group,
  NativeSelect,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { Link, Route, Routes, useSearchParams } from 'react-router';
import { useI18n } from '../../i18n/i18n';
import { DataTable } from '../../layout/DataTable';
import { Failed, Loading } from '../../layout/Loading';
import { CursorMore } from '../shared/ListControls';
import { BlockedBadge, useAccountName } from './accounts';
import { CreateStaff } from './CreateStaff';
import { UserPage } from './UserPage';
import { useUserList } from './queries';

const ROLE_FILTERS = ['', 'none', 'owner', 'moderator', 'partner', 'support'] as const;
type RoleFilter = (typeof ROLE_FILTERS)[number];

export function UsersPage() {
  return (
    <Routes>
      <Route index element={<UsersList />} />
      <Route path=":id" element={<UserPage />} />
    </Routes>
  );
}

function UsersList() {
  const { t } = useI18n();
  // The search lives in the address: going back from an account returns to the same results.
  const [params, setParams] = useSearchParams();
  const searchedRole = ROLE_FILTERS.find((value) => value === params.get('role')) ?? '';
  const search = { q: params.get('q') ?? undefined, role: searchedRole || undefined };
  const [text, setText] = useState(search.q ?? '');
  const [role, setRole] = useState<RoleFilter>(searchedRole);

  function submit(event: FormEvent) {
    event.preventDefault();
    const next: Record<string, string> = {};
    if (text.trim() !== '') next.q = text.trim();
    if (role !== '') next.role = role;
    setParams(next);
  }

  return (
    <Stack>
      <Title order={2}>{t('console.users.title')}</Title>
      <Card withBorder component="form" role="search" onSubmit={submit}>
        <Group align="flex-end">
          <TextInput
            label={t('console.users.search')}
            description={t('console.users.searchHint')}
            value={text}
            onChange={(e) => setText(e.currentTarget.value)}
            maxLength={100}
            style={{ flex: 1, minWidth: 240 }}
          />
          <NativeSelect
            label={t('console.users.roleFilter')}
            value={role}
            onChange={(e) => setRole(e.currentTarget.value as RoleFilter)}
            data={ROLE_FILTERS.map((value) => ({
              value,
              label: t(`console.users.filter.${value === '' ? 'all' : value}`),
            }))}
          />
          <Button type="submit">{t('console.users.find')}</Button>
        </Group>
      </Card>
      <UserResults search={search} />
      <CreateStaff />
    </Stack>
  );
}

function UserResults({ search }: { search: { q?: string; role?: Exclude<RoleFilter, ''> } }) {
  const { t, date, bytes } = useI18n();
  const accountName = useAccountName();
  const users = useUserList(search);
  const items = users.data?.pages.flatMap((page) => page.items) ?? [];

  return (
    <Card withBorder component="section" role="region" aria-labelledby="users-found">
      <Title order={3} id="users-found" mb="xs">
        {t('console.users.found')}
      </Title>
      {users.isPending && <Loading />}
      {users.isError && <Failed error={users.error} retry={() => void users.refetch()} />}
      {users.isSuccess && items.length === 0 && <Text>{t('console.users.noneFound')}</Text>}
      {items.length > 0 && (
        <DataTable
          minWidth={640}
          rows={items}
          rowKey={(user) => user.id}
          columns={[
            {
              header: t('console.users.account'),
              cell: (user) => (
                <Anchor component={Link} to={`/staff/users/${user.id}`}>
                  {accountName(user)}
                </Anchor>
              ),
            },
            {
              header: t('console.users.role'),
              cell: (user) => t(`console.users.role.${user.role ?? 'none'}`),
            },
            {
              header: t('console.users.subscription'),
              cell: (user) =>
                user.subscription?.waiting_first_use
                  ? t('console.users.waitingFirstUse')
                  : user.subscription
                    ? t(
                        user.subscription.active
                          ? 'console.users.runsUntil'
                          : 'console.users.endedOn',
                        { date: date(user.subscription.expires_at) },
                      )
                    : t('console.users.noSubscription'),
            },
            {
              header: t('console.users.traffic'),
              cell: (user) =>
                t('console.users.usedOf', {
                  used: bytes(user.traffic.used_bytes),
                  limit: bytes(user.traffic.limit_bytes),
                }),
            },
            { header: t('console.users.state'), cell: (user) => <BlockedBadge user={user} /> },
          ]}
        />
      )}
      <CursorMore list={users} />
    </Card>
  );
}
