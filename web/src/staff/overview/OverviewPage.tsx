import { Card, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useI18n } from '../../i18n/i18n';
import { minorToDecimal } from '../../i18n/money';
import { Failed, Loading } from '../../layout/Loading';
import { DailyChart } from '../shared/DailyChart';
import { useStats } from './queries';

/** Days the charts cover, today included. */
const CHART_DAYS = 30;

/**
 * The business at a glance (staff guard): today's figures from `GET /admin/stats` and a chart per
 * figure over the last 30 UTC days. Money is charted per currency, never summed across them.
 */
export function OverviewPage() {
  const { t, money, bytes } = useI18n();
  const stats = useStats(CHART_DAYS);
  if (stats.isPending) return <Loading />;
  if (stats.isError) return <Failed error={stats.error} retry={() => void stats.refetch()} />;

  const { totals, days } = stats.data;
  const today = days[days.length - 1];
  const todayReceived = Object.entries(today?.received ?? {}).sort(([a], [b]) =>
    a.localeCompare(b),
  );
  const currencies = [...new Set(days.flatMap((day) => Object.keys(day.received)))].sort();
  const count = (value: number) => String(Math.round(value));

  return (
    <Stack>
      <Title order={2}>{t('console.overview.title')}</Title>
      <Card withBorder component="section" aria-labelledby="overview-today">
        <Title order={3} size="h4" id="overview-today" mb="sm">
          {t('console.overview.today')}
        </Title>
        <SimpleGrid cols={{ base: 2, sm: 3 }} component="dl" m={0}>
          <Figure label={t('console.overview.users')} value={String(totals.users)} />
          <Figure
            label={t('console.overview.activeSubscriptions')}
            value={String(totals.active_subscriptions)}
          />
          <Figure
            label={t('console.overview.receivedToday')}
            value={
              todayReceived.length === 0
                ? t('console.overview.nothingReceived')
                : todayReceived.map(([code, amount]) => money(amount, code)).join(', ')
            }
          />
          <Figure label={t('console.overview.openTickets')} value={String(totals.open_tickets)} />
          <Figure
            label={t('console.overview.pendingWithdrawals')}
            value={String(totals.pending_withdrawals)}
          />
          <Figure
            label={t('console.overview.nodesOnline')}
            value={t('console.overview.nodesOf', {
              online: totals.nodes_online,
              total: totals.nodes_total,
            })}
          />
          <Figure
            label={t('console.overview.waitingFirstUse')}
            value={String(totals.waiting_first_use)}
          />
          <Figure
            label={t('console.overview.warningsToday')}
            value={String(today?.traffic_warnings ?? 0)}
          />
        </SimpleGrid>
      </Card>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <DailyChart
          title={t('console.overview.signups')}
          points={days.map((day) => ({ date: day.date, value: day.signups }))}
          format={count}
        />
        <DailyChart
          title={t('console.overview.paidInvoices')}
          points={days.map((day) => ({ date: day.date, value: day.paid_invoices }))}
          format={count}
        />
        {currencies.map((code) => (
          <DailyChart
            key={code}
            title={t('console.overview.received', { currency: code })}
            points={days.map((day) => {
              const amount = day.received[code] ?? '0';
              // The bar's height only; the words keep the exact amount.
              return {
                date: day.date,
                value: Number(minorToDecimal(amount, code)),
                text: money(amount, code),
              };
            })}
            format={(value) => `${value} ${code}`}
          />
        ))}
        <DailyChart
          title={t('console.overview.traffic')}
          points={days.map((day) => ({ date: day.date, value: day.traffic_bytes }))}
          format={bytes}
        />
        <DailyChart
          title={t('console.overview.warnings')}
          points={days.map((day) => ({ date: day.date, value: day.traffic_warnings }))}
          format={count}
        />
      </SimpleGrid>
      {currencies.length === 0 && <Text size="sm">{t('console.overview.noMoney')}</Text>}
    </Stack>
  );
}

/** One figure of today: a term and its value in the figures' description list. */
function Figure({ label, value }: { label: string; value: string }) {
  return (
    <div>
      <Text component="dt" size="sm">
        {label}
      </Text>
      <Text component="dd" m={0} fw={700} fz="xl">
        {value}
      </Text>
    </div>
  );
}
