export const Dashboard = () => <div>Dashboard</div>;
