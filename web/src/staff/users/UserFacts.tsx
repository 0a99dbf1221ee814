/** What an account is and what it has: its identity and role, its subscription and traffic. */
import { Stack, Text } from '@mantine/core';
import { useI18n } from '../../i18n/i18n';
import { BlockedBadge } from './accounts';
import { Fact, Section } from './parts';
import type { StaffUser } from './queries';

export function AccountFacts({ user }: { user: StaffUser }) {
  const { t, date } = useI18n();
  return (
    <Section id="user-account" title={t('console.users.accountSection')}>
      <Stack gap={4}>
        <Fact label={t('console.users.id')}>{user.id}</Fact>
        <Fact label={t('console.users.role')}>
          {t(`console.users.role.${user.role ?? 'none'}`)}
        </Fact>
        {user.username && <Fact label={t('console.users.username')}>{user.username}</Fact>}
        {user.tg_id !== null && <Fact label={t('console.users.tgId')}>{user.tg_id}</Fact>}
        <Fact label={t('console.users.createdAt')}>{date(user.created_at)}</Fact>
        <Fact label={t('console.users.state')}>
          <BlockedBadge user={user} />
        </Fact>
        {user.role === 'partner' && (
          <>
            <Fact label={t('console.users.partnerCode')}>{user.partner_code ?? '-'}</Fact>
            <Fact label={t('console.users.commission')}>
              {user.commission_percent === null ? '-' : `${user.commission_percent}%`}
            </Fact>
          </>
        )}
        {user.role === 'moderator' && (
          <Fact label={t('console.users.nodeAccess')}>
            {t(user.can_manage_nodes ? 'console.users.yes' : 'console.users.no')}
          </Fact>
        )}
      </Stack>
    </Section>
  );
}

export function SubscriptionFacts({ user }: { user: StaffUser }) {
  const { t, date, bytes } = useI18n();
  const subscription = user.subscription;
  return (
    <Section id="user-subscription" title={t('console.users.subscription')}>
      <Stack gap={4}>
        {subscription ? (
          <>
            <Fact label={t('console.users.plan')}>{subscription.plan_name}</Fact>
            <Fact label={t('console.users.ends')}>
              {subscription.waiting_first_use
                ? t('console.users.waitingFirstUse')
                : t(subscription.active ? 'console.users.runsUntil' : 'console.users.endedOn', {
                    date: date(subscription.expires_at),
                  })}
            </Fact>
          </>
        ) : (
          <Text size="sm">{t('console.users.noSubscription')}</Text>
        )}
        <Fact label={t('console.users.traffic')}>
          {t('console.users.usedOf', {
            used: bytes(user.traffic.used_bytes),
            limit: bytes(user.traffic.limit_bytes),
          })}
        </Fact>
      </Stack>
    </Section>
  );
}
