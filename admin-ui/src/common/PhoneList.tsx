import { useMediaQuery, type Theme } from '@mui/material';
import type { ReactNode } from 'react';
import { SimpleList, type RaRecord } from 'react-admin';

type Text<R> = (record: R) => ReactNode;

/**
 * A list's records as the table in `children` on a wider screen, and on a phone (narrower than MUI's
 * `sm`, 600 px) as one item per record that opens it: who or what on the first line (`primary`), the
 * figure on its right (`tertiary`), the rest below (`secondary`), so nothing a seller looks for first
 * sits in a column scrolled out of view.
 */
export function PhoneList<R extends RaRecord>({ primary, secondary, tertiary, children }: { primary: Text<R>; secondary?: Text<R>; tertiary?: Text<R>; children: ReactNode }) {
  const phone = useMediaQuery<Theme>((theme) => theme.breakpoints.down('sm'));
  if (!phone) return <>{children}</>;
  return <SimpleList<R> primaryText={primary} secondaryText={secondary} tertiaryText={tertiary} rowClick="show" />;
}

/** The parts of a phone item's second line that are there, joined by a middle dot. */
export const joined = (...parts: (string | null | undefined | false)[]) => parts.filter(Boolean).join(' · ');
