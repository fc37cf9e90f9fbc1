"""Browser play (issue 25 item 8): a person takes seats of any game through a page per seat."""
