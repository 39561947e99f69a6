/** The frame of the signed-out pages (sign in, sign up, password reset, first organization). */
import type { ReactNode } from 'react';
import { Box, Card, CardContent, Typography } from '@mui/material';

export const AuthCard = ({ title, subtitle, children }: { title: string; subtitle?: ReactNode; children: ReactNode }) => (
  <Box
    component="main"
    sx={{ minHeight: '100vh', display: 'flex', alignItems: 'center', justifyContent: 'center', bgcolor: '#f5f6f8', p: 2 }}
  >
    <Card sx={{ width: '100%', maxWidth: 420 }}>
      <CardContent sx={{ p: 4 }}>
        <Typography variant="overline" component="p" sx={{ color: 'text.secondary' }}>
          Emporia
        </Typography>
        <Typography variant="h5" component="h1" gutterBottom>
          {title}
        </Typography>
        {subtitle ? (
          <Typography variant="body2" sx={{ color: 'text.secondary', mb: 2 }}>
            {subtitle}
          </Typography>
        ) : null}
        {children}
      </CardContent>
    </Card>
  </Box>
);
