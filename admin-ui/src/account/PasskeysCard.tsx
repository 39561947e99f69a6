/** The titled card of the passkeys and sign-in-methods sections (the account page's section look). */
import type { ReactNode } from 'react';
import { Card, CardContent, Typography } from '@mui/material';

export const SectionCard = ({ title, id, children }: { title: string; id: string; children: ReactNode }) => (
  <Card component="section" aria-labelledby={`${id}-title`}>
    <CardContent>
      <Typography id={`${id}-title`} variant="h6" component="h2" gutterBottom>
        {title}
      </Typography>
      {children}
    </CardContent>
  </Card>
);
