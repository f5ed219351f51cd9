"""Tools for course authors: `dev new` writes a small working course, `dev check` validates one."""
