"""What the code-host faces (GitHub, GitLab) share: a REST client that keeps its token on
the API's own host with bounded pagination, and the sticky report comment's marker and lookup."""
