-- A provider's cursor is opaque, and nothing bounds its length: page tokens of some APIs run past 255 characters, and
-- such a cursor failed every save of the report's place, each run read again from an hour before the last that saved.
-- varchar to text changes no stored value (no rewrite of the table).
ALTER TABLE provider_report
    ALTER COLUMN second_look_from TYPE text,
    ALTER COLUMN last_end TYPE text;
