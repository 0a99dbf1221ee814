import { Button, CopyButton, Group, Text, VisuallyHidden } from '@mantine/core';
import { useI18n } from '../i18n/i18n';

/** A labelled value shown in full, with a Copy button whose accessible name says what it copies. */
export function CopyField({
  label,
  shown,
  copy,
  copyWhat,
}: {
  label: string;
  shown: string;
  copy: string;
  copyWhat: string;
}) {
  const { t } = useI18n();
  return (
    <div>
      <Text size="sm">{label}</Text>
      <Group gap="xs" wrap="nowrap" justify="space-between">
        <Text ff="monospace" style={{ wordBreak: 'break-all' }}>
          {shown}
        </Text>
        <CopyButton value={copy}>
          {({ copied, copy: doCopy }) => (
            <Button size="compact-sm" variant="light" onClick={doCopy}>
              {copied ? (
                t('common.copied')
              ) : (
                <>
                  {t('common.copy')}
                  <VisuallyHidden>{` ${copyWhat}`}</VisuallyHidden>
                </>
              )}
            </Button>
          )}
        </CopyButton>
      </Group>
    </div>
  );
}
