import {
  Button,
  CopyButton,
  Group,
  Image,
  SimpleGrid,
  Stack,
  Tabs,
  Text,
  TextInput,
} from '@mantine/core';
import QRCode from 'qrcode';
import { useEffect, useId, useState } from 'react';
import { useI18n } from '../i18n/i18n';
import { APPS, PLATFORMS, type Platform, platformOf } from './apps';

/** A QR code of `value` as an image (a data: address, which the page's policy admits). */
export function QrCode({ value, alt, size = 200 }: { value: string; alt: string; size?: number }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    QRCode.toDataURL(value, { margin: 1, width: size })
      .then((url) => live && setSrc(url))
      .catch(() => live && setSrc(null));
    return () => {
      live = false;
    };
  }, [value, size]);
  return src ? <Image src={src} alt={alt} w={size} h={size} /> : null;
}

/**
 * A subscription link as a subscriber uses it: the link to copy, its QR code for another device,
 * and per platform the apps that import it with one press. The account's Connect section and the
 * link's own page show the same.
 */
export function ConnectPanel({ link }: { link: string }) {
  const { t } = useI18n();
  const appsId = useId();
  const [platform, setPlatform] = useState<Platform>(() => platformOf(navigator.userAgent));
  return (
    <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="lg">
      <Stack gap="xs">
        <TextInput
          label={t('connect.link')}
          value={link}
          readOnly
          onFocus={(event) => event.currentTarget.select()}
          styles={{ input: { fontFamily: 'monospace' } }}
        />
        <CopyButton value={link}>
          {({ copied, copy }) => (
            <Button variant="light" onClick={copy} w="fit-content">
              {copied ? t('connect.copied') : t('connect.copy')}
            </Button>
          )}
        </CopyButton>
        <Text fw={500} size="sm" mt="sm" id={appsId}>
          {t('connect.apps')}
        </Text>
        <Tabs value={platform} onChange={(value) => value && setPlatform(value as Platform)}>
          <Tabs.List aria-labelledby={appsId}>
            {PLATFORMS.map((code) => (
              <Tabs.Tab key={code} value={code}>
                {t(`connect.platform.${code}`)}
              </Tabs.Tab>
            ))}
          </Tabs.List>
          {PLATFORMS.map((code) => (
            <Tabs.Panel key={code} value={code} pt="sm">
              <Group gap="xs">
                {APPS[code].map((app) => (
                  <Button key={app.name} component="a" href={app.deepLink(link)} variant="default">
                    {t('connect.open', { app: app.name })}
                  </Button>
                ))}
              </Group>
            </Tabs.Panel>
          ))}
        </Tabs>
      </Stack>
      <Stack gap="xs" align="center">
        <QrCode value={link} alt={t('connect.qr')} />
        <Text size="sm" ta="center">
          {t('connect.qrHint')}
        </Text>
      </Stack>
    </SimpleGrid>
  );
}
