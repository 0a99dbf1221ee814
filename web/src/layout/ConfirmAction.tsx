import { Button, type ButtonProps, Group, Modal, Stack, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { type ReactNode, useState } from 'react';
import { useI18n } from '../i18n/i18n';

/**
 * A button for a destructive or irreversible action: it opens a dialog that says in words what
 * will happen (`question`) and runs `action` only when confirmed. `children` may add fields (a
 * reason) that the action reads. `onClosed` runs when the dialog closes, done or cancelled: a
 * list is read again there rather than in `action`, so that a refusal stays on screen until it
 * has been read even when the refused row is about to leave the list.
 */
export function ConfirmAction({
  label,
  question,
  action,
  children,
  color = 'red',
  disabled,
  onClosed,
}: {
  label: string;
  question: string;
  action: () => Promise<unknown>;
  children?: ReactNode;
  color?: ButtonProps['color'];
  disabled?: boolean;
  onClosed?: () => unknown;
}) {
  const { t, errorText } = useI18n();
  const [opened, { open, close }] = useDisclosure(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  function dismiss() {
    close();
    setError(null);
    void onClosed?.();
  }

  async function confirm() {
    setBusy(true);
    setError(null);
    try {
      await action();
      dismiss();
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <Button color={color} variant="light" onClick={open} disabled={disabled}>
        {label}
      </Button>
      <Modal
        opened={opened}
        onClose={dismiss}
        title={label}
        closeButtonProps={{ 'aria-label': t('common.close') }}
      >
        <Stack>
          <Text>{question}</Text>
          {children}
          {error && (
            <Text c="red" role="alert">
              {error}
            </Text>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={dismiss}>
              {t('common.cancel')}
            </Button>
            <Button color={color} loading={busy} onClick={() => void confirm()}>
              {t('common.confirm')}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
