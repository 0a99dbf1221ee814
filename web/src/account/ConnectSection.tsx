import {
  Alert,
  Badge,
  Button,
  Card,
  Group,
  Modal,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { ApiError, type CreatedDevice, type Device } from '../api/client';
import {
  useCreateDevice,
  useDevices,
  useRemoveDevice,
  useRenameDevice,
  useRotateLink,
} from '../api/hooks';
import { ConnectPanel } from '../connect/ConnectPanel';
import { useI18n } from '../i18n/i18n';
import { ConfirmAction } from '../layout/ConfirmAction';
import { DataTable } from '../layout/DataTable';
import { Failed, Loading } from '../layout/Loading';
import { useNotify } from '../layout/notify';

/** The service's rule for device names: 1-40 characters. */
const NAME_MAX = 40;

/**
 * `/account` → Connect: the account's subscription link (copy, QR, the apps per platform), a new
 * link when the old one was shared, and the devices the link enrolled (rename, remove, add one
 * with a link of its own).
 */
export function ConnectSection() {
  const { t } = useI18n();
  const devices = useDevices();
  return (
    <Card withBorder component="section" aria-labelledby="connect-title">
      <Stack gap="sm">
        <Title order={2} size="h3" id="connect-title">
          {t('connect.title')}
        </Title>
        {devices.isPending && <Loading />}
        {devices.isError && <Failed error={devices.error} retry={() => void devices.refetch()} />}
        {devices.data && (
          <>
            <Text size="sm">{t('connect.intro')}</Text>
            <ConnectPanel link={devices.data.subscription_url} />
            <RotateLink />
            <DeviceList devices={devices.data.devices} limit={devices.data.device_limit} />
            <AddDevice limit={devices.data.device_limit} />
          </>
        )}
      </Stack>
    </Card>
  );
}

function RotateLink() {
  const { t } = useI18n();
  const rotate = useRotateLink();
  const notify = useNotify();
  return (
    <Group>
      <ConfirmAction
        label={t('connect.rotate')}
        question={t('connect.rotateQuestion')}
        action={async () => {
          await rotate.mutateAsync();
          notify(t('connect.rotated'), 'green');
        }}
      />
    </Group>
  );
}

function DeviceList({ devices, limit }: { devices: Device[]; limit: number }) {
  const { t, bytes, dateTime } = useI18n();
  const seen = (device: Device) => device.last_seen_at ?? device.last_fetch_at;
  return (
    <Stack gap="xs">
      <Title order={3} size="h4">
        {t('devices.title')}
      </Title>
      <Text size="sm">{t('devices.count', { count: devices.length, limit })}</Text>
      <DataTable
        minWidth={760}
        rows={devices}
        rowKey={(device) => device.id}
        columns={[
          {
            header: t('devices.name'),
            cell: (device) => (
              <Stack gap={4} align="flex-start">
                <Text size="sm" fw={600}>
                  {device.name}
                </Text>
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
              const at = seen(device);
              return at ? dateTime(at) : t('devices.never');
            },
          },
          {
            header: t('devices.where'),
            cell: (device) =>
              [
                device.address_hint,
                device.last_node_id && t('devices.node', { id: device.last_node_id.slice(0, 8) }),
              ]
                .filter(Boolean)
                .join(' · ') || '-',
          },
          {
            header: t('devices.traffic'),
            cell: (device) =>
              t('devices.bytes', { down: bytes(device.bytes_down), up: bytes(device.bytes_up) }),
          },
          {
            header: t('devices.actions'),
            cell: (device) => <DeviceActions device={device} />,
          },
        ]}
      />
    </Stack>
  );
}

function DeviceActions({ device }: { device: Device }) {
  const { t } = useI18n();
  const remove = useRemoveDevice();
  const notify = useNotify();
  const [renaming, setRenaming] = useState(false);
  return (
    <Group gap="xs" wrap="nowrap">
      <Button variant="default" onClick={() => setRenaming(true)}>
        {t('devices.rename', { name: device.name })}
      </Button>
      <ConfirmAction
        label={t('devices.remove', { name: device.name })}
        question={t('devices.removeQuestion', { name: device.name })}
        action={async () => {
          await remove.mutateAsync(device.id);
          notify(t('devices.removed', { name: device.name }));
        }}
      />
      <Modal
        opened={renaming}
        onClose={() => setRenaming(false)}
        title={t('devices.renameTitle', { name: device.name })}
        closeButtonProps={{ 'aria-label': t('common.close') }}
      >
        {renaming && <RenameForm device={device} onDone={() => setRenaming(false)} />}
      </Modal>
    </Group>
  );
}

function RenameForm({ device, onDone }: { device: Device; onDone: () => void }) {
  const { t, errorText } = useI18n();
  const rename = useRenameDevice();
  const [name, setName] = useState(device.name);
  function submit(event: FormEvent) {
    event.preventDefault();
    rename.mutate({ id: device.id, name: name.trim() }, { onSuccess: onDone });
  }
  return (
    <form onSubmit={submit}>
      <Stack>
        <TextInput
          label={t('devices.newName')}
          description={t('devices.nameRule')}
          value={name}
          onChange={(event) => setName(event.currentTarget.value)}
          required
          maxLength={NAME_MAX}
          data-autofocus
        />
        {rename.isError && (
          <Alert color="red" role="alert">
            {errorText(rename.error)}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button type="submit" loading={rename.isPending}>
            {t('devices.save')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** A device with a link of its own; at the plan's limit the service refuses it (409). */
function AddDevice({ limit }: { limit: number }) {
  const { t, errorText } = useI18n();
  const create = useCreateDevice();
  const [name, setName] = useState('');
  const [made, setMade] = useState<CreatedDevice | null>(null);

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate(name.trim(), {
      onSuccess: (created) => {
        setMade(created);
        setName('');
      },
    });
  }

  const full = create.error instanceof ApiError && create.error.code === 'DEVICE_LIMIT';
  return (
    <form onSubmit={submit} aria-labelledby="add-device-title">
      <Stack gap="xs">
        <Title order={3} size="h4" id="add-device-title">
          {t('devices.add')}
        </Title>
        <Text size="sm">{t('devices.addHint')}</Text>
        <Group align="flex-end">
          <TextInput
            label={t('devices.deviceName')}
            description={t('devices.nameRule')}
            value={name}
            onChange={(event) => setName(event.currentTarget.value)}
            required
            maxLength={NAME_MAX}
          />
          <Button type="submit" variant="light" loading={create.isPending}>
            {t('devices.addSubmit')}
          </Button>
        </Group>
        {create.isError && (
          <Alert color="red" role="alert">
            {full ? t('devices.full', { count: limit }) : errorText(create.error)}
          </Alert>
        )}
      </Stack>
      <Modal
        opened={made !== null}
        onClose={() => setMade(null)}
        title={made ? t('devices.added', { name: made.device.name }) : ''}
        closeButtonProps={{ 'aria-label': t('common.close') }}
        size="xl"
      >
        {made && (
          <Stack>
            <Text>{t('devices.addedHint')}</Text>
            <ConnectPanel link={made.subscription_url} />
          </Stack>
        )}
      </Modal>
    </form>
  );
}
