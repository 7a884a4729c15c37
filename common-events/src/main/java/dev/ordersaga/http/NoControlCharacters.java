package dev.ordersaga.http;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Text of a request that is stored or sent on: no control characters. PostgreSQL refuses a NUL in any text, which
 * would fail the insert after validation passed (a 500 for the client's mistake); the other control characters have
 * no place in a name, an address, an id or a one-line reason either, and would break the log lines that carry them.
 * Null is valid: {@code @NotNull} says whether the field is required.
 */
@Documented
@Constraint(validatedBy = NoControlCharacters.Validator.class)
@Target({ElementType.FIELD, ElementType.METHOD, ElementType.PARAMETER, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
public @interface NoControlCharacters {

    String message() default "must not contain control characters";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    class Validator implements ConstraintValidator<NoControlCharacters, CharSequence> {

        @Override
        public boolean isValid(CharSequence text, ConstraintValidatorContext context) {
            return isFree(text);
        }

        /** For text that comes in outside a validated body: a header. */
        public static boolean isFree(CharSequence text) {
            return text == null || text.chars().noneMatch(Character::isISOControl);
        }
    }
}
