import {
  Alert,
  Anchor,
  Box,
  Card,
  Container,
  Group,
  Progress,
  SegmentedControl,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useEffect } from 'react';
import { useParams } from 'react-router';
import { ApiError, type SubscriptionInfo } from '../api/client';
import { useSubscriptionInfo } from '../api/hooks';
import { type Language, LANGUAGES, useI18n } from '../i18n/i18n';
import { Failed, Loading } from '../layout/Loading';
import { ConnectPanel } from './ConnectPanel';

const DAY_MS = 86_400_000;

/** Where a subscriber fixes each outcome that leaves nothing to connect to. */
const OUTCOME_PAGE = {
  blocked: '/support',
  expired: '/plans',
  traffic_exceeded: '/plans',
  device_limit: '/account',
} as const;

/**
 * A browser at a subscription link (`/sub/<token>`, served by the service at the link itself): no
 * sign-in, the token is the key. The plan, days and traffic left, the devices, why nothing
 * connects when that is so, and how to import the link. Search engines are asked to stay out.
 */
export function SubscriptionPage() {
  const { t, language, setLanguage } = useI18n();
  const { token = '' } = useParams();
  const info = useSubscriptionInfo(token);
  useNoIndex();

  const notFound = info.error instanceof ApiError && info.error.status === 404;
  return (
    <Container size="md" py="md">
      <Group justify="space-between" component="header" mb="md">
        <Text fw={700} size="lg">
          {t('app.name')}
        </Text>
        <SegmentedControl
          size="xs"
          aria-label={t('nav.language')}
          value={language}
          onChange={(value) => setLanguage(value as Language)}
          data={LANGUAGES.map((code) => ({ value: code, label: code.toUpperCase() }))}
        />
      </Group>
      <Box component="main">
        <Stack>
          <Title order={1}>{t('sub.title')}</Title>
          {info.isPending && <Loading />}
          {notFound && (
            <Alert color="red" role="alert">
              {t('sub.notFound')}
            </Alert>
          )}
          {info.isError && !notFound && (
            <Failed error={info.error} retry={() => void info.refetch()} />
          )}
          {info.data && <Figures info={info.data} />}
        </Stack>
      </Box>
    </Container>
  );
}

/** `<meta name="robots" content="noindex">` while the page is shown (the service's header says so too). */
function useNoIndex() {
  useEffect(() => {
    const meta = document.createElement('meta');
    meta.name = 'robots';
    meta.content = 'noindex, nofollow';
    document.head.append(meta);
    return () => meta.remove();
  }, []);
}

function Figures({ info }: { info: SubscriptionInfo }) {
  const { t, bytes, date, dateTime } = useI18n();
  const { traffic_used_bytes: used, traffic_limit_bytes: limit, outcome } = info;
  const percent = limit > 0 ? Math.min(100, (used / limit) * 100) : 0;
  const left = info.expires_at
    ? Math.max(0, Math.ceil((Date.parse(info.expires_at) - Date.now()) / DAY_MS))
    : 0;
  const fix =
    outcome === 'ok' || outcome === 'no_node'
      ? null
      : { href: OUTCOME_PAGE[outcome], label: t(`sub.outcome.link.${outcome}`) };
  return (
    <>
      {outcome !== 'ok' && (
        <Alert color="orange" role="status">
          <Stack gap={4} align="flex-start">
            <Text>{t(`sub.outcome.${outcome}`, { limit: info.device_limit })}</Text>
            {fix && <Anchor href={fix.href}>{fix.label}</Anchor>}
          </Stack>
        </Alert>
      )}
      <Card withBorder component="section" aria-labelledby="sub-plan">
        <Stack gap="xs">
          <Title order={2} size="h3" id="sub-plan">
            {t('sub.plan')}: {info.plan_name ?? t('sub.noPlan')}
          </Title>
          {info.expires_at && (
            <Text>
              {left > 0
                ? t('sub.daysLeft', { days: left, date: date(info.expires_at) })
                : `${t('sub.ended')}: ${date(info.expires_at)}`}
            </Text>
          )}
          <Text fw={500}>{t('sub.traffic')}</Text>
          <Progress
            value={percent}
            color={percent >= 90 ? 'red' : 'indigo'}
            size="lg"
            aria-label={t('sub.trafficBar')}
          />
          <Text>{t('sub.trafficUsed', { used: bytes(used), limit: bytes(limit) })}</Text>
        </Stack>
      </Card>
      <Card withBorder component="section" aria-labelledby="sub-connect">
        <Stack gap="sm">
          <Title order={2} size="h3" id="sub-connect">
            {t('connect.title')}
          </Title>
          <Text size="sm">{t('connect.intro')}</Text>
          <ConnectPanel link={info.subscription_url} />
        </Stack>
      </Card>
      <Card withBorder component="section" aria-labelledby="sub-devices">
        <Title order={2} size="h3" id="sub-devices" mb="xs">
          {t('sub.devices', { count: info.devices.length, limit: info.device_limit })}
        </Title>
        {info.devices.length === 0 ? (
          <Text>{t('common.none')}</Text>
        ) : (
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('devices.name')}</Table.Th>
                <Table.Th>{t('devices.lastSeen')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {info.devices.map((device, index) => (
                <Table.Tr key={index}>
                  <Table.Td>{device.name}</Table.Td>
                  <Table.Td>
                    {device.last_seen_at ? dateTime(device.last_seen_at) : t('devices.never')}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Card>
    </>
  );
}
