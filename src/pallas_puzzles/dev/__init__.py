"""Tools for course authors: `dev new` writes a small working course, `dev check` validates one,
`dev guide` prints the course format and `dev times` measures the time limits."""
