/** A titled card of the account page; every section of the page is one (import it for new sections). */
import type { ReactNode } from 'react';
import { Card, CardContent, Typography } from '@mui/material';

export const AccountSection = ({ title, id, children }: { title: string; id: string; children: ReactNode }) => (
  <Card component="section" aria-labelledby={`${id}-title`}>
    <CardContent>
      <Typography id={`${id}-title`} variant="h6" component="h2" gutterBottom>
        {title}
      </Typography>
      {children}
    </CardContent>
  </Card>
);

