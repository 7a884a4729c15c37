-- An operator's name is the identity provider's (upn, preferred_username or sub), whose length no standard bounds
-- below an e-mail address's 254 characters: one longer than 128 made PostgreSQL refuse every action of that person
-- (a 500), and a name shortened to fit could be another person's. The name is kept whole; the detail, free text,
-- is shortened to its column as other reasons are.
ALTER TABLE operator_action ALTER COLUMN operator TYPE text;
