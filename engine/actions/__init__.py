"""The actions floor: every tag action and host event declared once, and the reducer that
answers a reply's tags with them (DESIGN.md "Actions: one declaration each")."""
