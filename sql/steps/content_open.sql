-- content views for steps that need example content (refine, `examples`), when no sealed
-- content is attached: the main tables as they are (sealed examples, if any, read as
-- hunk/target null and message ''). Temporary: they live only on this connection.
-- Grain: one row per example / per comment; columns those of review_examples / review_comments.
create or replace temp view review_examples_content as select * from review_examples;
create or replace temp view review_comments_content as select * from review_comments;
