/**
 * One account in the console (/staff/users/<id>): its subscription, traffic, blocked state, partner
 * terms, devices and invoices, and what staff may do to it. Every action goes through the service's
 * own route (audited there); the owner-only ones are shown to the owner only.
 */
import { Anchor, SimpleGrid, Stack, Title } from '@mantine/core';
import { Link, useParams } from 'react-router';
import { useI18n } from '../../i18n/i18n';
import { Failed, Loading } from '../../layout/Loading';
import { useAccountName } from './accounts';
import { useUser } from './queries';
import { UserActions } from './UserActions';
import { UserDevices } from './UserDevices';
import { AccountFacts, SubscriptionFacts } from './UserFacts';
import { UserInvoices, UserTickets } from './UserHistory';

export function UserPage() {
  const { t } = useI18n();
  const { id = '' } = useParams();
  const accountName = useAccountName();
  const user = useUser(id);

  return (
    <Stack>
      <Anchor component={Link} to="/staff/users" size="sm">
        {t('console.users.back')}
      </Anchor>
      {user.isPending && <Loading />}
      {user.isError && <Failed error={user.error} retry={() => void user.refetch()} />}
      {user.data && (
        <>
          <Title order={2}>
            {t('console.users.accountTitle', { name: accountName(user.data) })}
          </Title>
          <SimpleGrid cols={{ base: 1, md: 2 }}>
            <AccountFacts user={user.data} />
            <SubscriptionFacts user={user.data} />
          </SimpleGrid>
          <UserActions user={user.data} />
          <UserDevices userId={user.data.id} account={accountName(user.data)} />
          <UserInvoices userId={user.data.id} />
          <UserTickets userId={user.data.id} />
        </>
      )}
    </Stack>
  );
}
