import { defaultTheme, type RaThemeOptions } from 'react-admin';

/**
 * react-admin's default theme with a darker primary (white app-bar text at ≥ 4.5:1) and error colour (red buttons on grey at ≥ 4.5:1) and a layout that
 * never scrolls sideways on a phone: wide tables scroll inside their own box.
 */
export const theme: RaThemeOptions = {
  ...defaultTheme,
  palette: { ...defaultTheme.palette, primary: { main: '#3949ab' }, secondary: { main: '#283593' }, error: { main: '#b71c1c' } },
  components: {
    ...defaultTheme.components,
    RaLayout: {
      styleOverrides: {
        root: { minWidth: 0, '& .RaLayout-content': { minWidth: 0 }, '& .RaLayout-contentWithSidebar': { minWidth: 0 } },
      },
    },
    RaList: { styleOverrides: { root: { '& .RaList-main': { minWidth: 0 }, '& .RaList-content': { overflowX: 'auto' } } } },
    RaShow: { styleOverrides: { root: { '& .RaShow-card': { overflowX: 'auto' } } } },
    // The "No … yet" page: readable text instead of half-transparent.
    RaEmpty: { styleOverrides: { root: { '& .RaEmpty-message': { opacity: 1, color: 'rgba(0, 0, 0, 0.7)' } } } },
    RaReferenceManyField: { styleOverrides: { root: { overflowX: 'auto' } } },
  },
};
