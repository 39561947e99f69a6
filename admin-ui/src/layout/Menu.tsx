/** The side menu, in the order a seller works: sell, get paid, then the tools and the settings. */
import { Menu as RaMenu } from 'react-admin';
import { Divider } from '@mui/material';
import BarChartIcon from '@mui/icons-material/BarChart';
import CategoryIcon from '@mui/icons-material/Category';
import CardGiftcardIcon from '@mui/icons-material/CardGiftcard';
import LinkIcon from '@mui/icons-material/Link';
import ShoppingCartIcon from '@mui/icons-material/ShoppingCart';
import PeopleIcon from '@mui/icons-material/People';
import ReceiptIcon from '@mui/icons-material/Receipt';
import AutorenewIcon from '@mui/icons-material/Autorenew';
import LocalOfferIcon from '@mui/icons-material/LocalOffer';
import TextFieldsIcon from '@mui/icons-material/TextFields';
import VpnKeyIcon from '@mui/icons-material/VpnKey';
import SpeedIcon from '@mui/icons-material/Speed';
import TimelineIcon from '@mui/icons-material/Timeline';
import FolderIcon from '@mui/icons-material/Folder';
import PercentIcon from '@mui/icons-material/Percent';
import KeyIcon from '@mui/icons-material/Key';
import WebhookIcon from '@mui/icons-material/Webhook';
import SettingsIcon from '@mui/icons-material/Settings';
import AppsIcon from '@mui/icons-material/Apps';
import VerifiedUserIcon from '@mui/icons-material/VerifiedUser';

export const Menu = () => (
  <RaMenu>
    <RaMenu.Item to="/" primaryText="Dashboard" leftIcon={<BarChartIcon />} />
    <RaMenu.Item to="/products" primaryText="Products" leftIcon={<CategoryIcon />} />
    <RaMenu.Item to="/benefits" primaryText="Benefits" leftIcon={<CardGiftcardIcon />} />
    <RaMenu.Item to="/checkout-links" primaryText="Checkout links" leftIcon={<LinkIcon />} />
    <RaMenu.Item to="/checkouts" primaryText="Checkouts" leftIcon={<ShoppingCartIcon />} />
    <Divider />
    <RaMenu.Item to="/customers" primaryText="Customers" leftIcon={<PeopleIcon />} />
    <RaMenu.Item to="/orders" primaryText="Orders" leftIcon={<ReceiptIcon />} />
    <RaMenu.Item to="/subscriptions" primaryText="Subscriptions" leftIcon={<AutorenewIcon />} />
    <Divider />
    <RaMenu.Item to="/discounts" primaryText="Discounts" leftIcon={<LocalOfferIcon />} />
    <RaMenu.Item to="/custom-fields" primaryText="Custom fields" leftIcon={<TextFieldsIcon />} />
    <RaMenu.Item to="/license-keys" primaryText="License keys" leftIcon={<VpnKeyIcon />} />
    <RaMenu.Item to="/meters" primaryText="Meters" leftIcon={<SpeedIcon />} />
    <RaMenu.Item to="/events" primaryText="Events" leftIcon={<TimelineIcon />} />
    <RaMenu.Item to="/files" primaryText="Files" leftIcon={<FolderIcon />} />
    <RaMenu.Item to="/tax-rates" primaryText="Tax rates" leftIcon={<PercentIcon />} />
    <Divider />
    <RaMenu.Item to="/access-tokens" primaryText="Access tokens" leftIcon={<KeyIcon />} />
    <RaMenu.Item to="/webhook-endpoints" primaryText="Webhooks" leftIcon={<WebhookIcon />} />
    <RaMenu.Item to="/oauth2/applications" primaryText="OAuth applications" leftIcon={<AppsIcon />} />
    <RaMenu.Item to="/oauth2/authorized" primaryText="Authorized apps" leftIcon={<VerifiedUserIcon />} />
    <RaMenu.Item to="/settings" primaryText="Settings" leftIcon={<SettingsIcon />} />
  </RaMenu>
);
