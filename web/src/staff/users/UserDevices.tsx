/** A user's devices on their console page, each removable with a reason (audited by the service). */
import { Badge, Card, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { useI18n } from '../../i18n/i18n';
import { ConfirmAction } from '../../layout/ConfirmAction';
import { DataTable } from '../../layout/DataTable';
import { Failed, Loading } from '../../layout/Loading';
import type { Schemas } from '../api';
import { ReasonField } from './parts';
import { removeUserDevice, useRereadUserDevices, useUserDevices } from './queries';

type Device = Schemas['DeviceResponse'];

/**
 * The devices section. Removal is refused (403) on the staff member's own account and on other
 * staff unless the owner asks; the refusal shows in the dialog, in words.
 */
export function UserDevices({ userId, account }: { userId: string; account: string }) {
  const { t, bytes, dateTime } = useI18n();
  const devices = useUserDevices(userId);
  const [reason, setReason] = useState('');
  const refresh = useRereadUserDevices(userId);

  return (
    <Card withBorder component="section" role="region" aria-labelledby="user-devices">
      <Title order={3} id="user-devices" mb="xs">
        {devices.data
          ? t('console.users.devices', {
              count: devices.data.devices.length,
              limit: devices.data.device_limit,
            })
          : t('devices.title')}
      </Title>
      {devices.isPending && <Loading />}
      {devices.isError && <Failed error={devices.error} retry={() => void devices.refetch()} />}
      {devices.data && (
        <DataTable<Device>
          minWidth={720}
          rows={devices.data.devices}
          rowKey={(device) => device.id}
          columns={[
            {
              header: t('devices.name'),
              cell: (device) => (
                <Stack gap={4} align="flex-start">
                  <Text size="sm">{device.name}</Text>
                  {device.shared_suspected && (
                    <Badge color="orange.9" variant="filled">
                      {t('devices.shared')}
                    </Badge>
                  )}
                </Stack>
              ),
            },
            {
              header: t('devices.app'),
              cell: (device) => device.client ?? t('devices.noClient'),
              breakAll: true,
            },
            {
              header: t('devices.lastSeen'),
              cell: (device) => {
                const at = device.last_seen_at ?? device.last_fetch_at;
                return at ? dateTime(at) : t('devices.never');
              },
            },
            {
              header: t('devices.where'),
              cell: (device) =>
                [device.address_hint, device.last_node_id].filter(Boolean).join(' · ') || '-',
              breakAll: true,
            },
            {
              header: t('devices.traffic'),
              cell: (device) =>
                t('devices.bytes', { down: bytes(device.bytes_down), up: bytes(device.bytes_up) }),
            },
            {
              header: t('console.users.actions'),
              cell: (device) => (
                <ConfirmAction
                  label={t('console.users.removeDevice', { name: device.name })}
                  question={t('console.users.removeDeviceQuestion', {
                    name: device.name,
                    account,
                  })}
                  action={async () => {
                    await removeUserDevice(userId, device.id, reason);
                    setReason('');
                  }}
                  onClosed={refresh}
                >
                  <ReasonField value={reason} onChange={setReason} />
                </ConfirmAction>
              ),
            },
          ]}
        />
      )}
    </Card>
  );
}
